{#- contracts.truncated, broken when truncates apply: key 1 (inserted at 10) is still visible after
    the truncate at 20. With truncate_handling='ignore' it is correct. -#}
{{ config(materialized='view') }}
select
  id, name, 'insert' as _cdc_op,
  named_struct('s1', cast(s as decimal(38,0)), 's2', cast(s as decimal(38,0)), 's3', cast(null as decimal(38,0))) as _cdc_seq,
  timestamp_seconds(1767225600 + s) as _cdc_commit_ts,
  timestamp'2026-01-02 00:00:01' as _cdc_applied_at
from values (1, 'a', 10), (2, 'b', 30) as t(id, name, s)
