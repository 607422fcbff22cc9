{#- Broken: key 1's first version runs to 25, past the start of the next one (20). -#}
{{ config(materialized='view') }}
select
  {{ star_except(ref('contracts_targets_scd2_ok'), ['_cdc_valid_to_seq']) }},
  case when id = 1 and not _cdc_is_current
       then named_struct('s1', cast(25 as decimal(38,0)), 's2', cast(25 as decimal(38,0)), 's3', cast(null as decimal(38,0)))
       else _cdc_valid_to_seq end as _cdc_valid_to_seq
from {{ ref('contracts_targets_scd2_ok') }}
