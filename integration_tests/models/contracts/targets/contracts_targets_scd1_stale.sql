{#- Broken: key 1 holds its insert (10) although its update (20) was consumed: a stale change won. -#}
{{ config(materialized='view') }}
select
  id,
  case when id = 1 then 'a1' else name end as name,
  case when id = 1 then 'insert' else _cdc_op end as _cdc_op,
  case when id = 1 then named_struct('s1', cast(10 as decimal(38,0)), 's2', cast(10 as decimal(38,0)), 's3', cast(null as decimal(38,0))) else _cdc_seq end as _cdc_seq,
  case when id = 1 then timestamp_seconds(1767225610) else _cdc_commit_ts end as _cdc_commit_ts,
  _cdc_applied_at
from {{ ref('contracts_targets_scd1_ok') }}
