{#- Broken: a row with a null key. -#}
{{ config(materialized='view') }}
select * from {{ ref('contracts_targets_scd1_ok') }}
union all
select cast(null as int) as id, name, _cdc_op, _cdc_seq, _cdc_commit_ts, _cdc_applied_at
from {{ ref('contracts_targets_scd1_ok') }} where id = 3
