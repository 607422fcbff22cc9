{#- contracts.items applied correctly, shaped like a cdc_scd1 target (delete_handling='remove'). -#}
{{ config(materialized='view') }}
select
  id,
  name,
  op as _cdc_op,
  named_struct('s1', cast(s as decimal(38,0)), 's2', cast(s as decimal(38,0)), 's3', cast(null as decimal(38,0))) as _cdc_seq,
  timestamp_seconds(1767225600 + commit_s) as _cdc_commit_ts,
  timestamp'2026-01-02 00:00:01' as _cdc_applied_at
from values
  (1, 'a2', 'update', 20, 20),
  (3, 'c', 'insert', 10, 10),
  (4, 'd2', 'update', 25, 15)
  as t(id, name, op, s, commit_s)
