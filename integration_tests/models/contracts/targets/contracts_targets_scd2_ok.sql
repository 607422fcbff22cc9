{#- contracts.items applied correctly, shaped like a cdc_scd2 target (delete_handling='new_record').
    Key 4's two changes share a commit time (one transaction): its first version is valid from and
    to the same instant, which is correct (sequences still increase). -#}
{{ config(materialized='view') }}
select
  id,
  name,
  timestamp_seconds(1767225600 + from_commit) as _cdc_valid_from,
  timestamp_seconds(1767225600 + to_commit) as _cdc_valid_to,
  named_struct('s1', cast(from_s as decimal(38,0)), 's2', cast(from_s as decimal(38,0)), 's3', cast(null as decimal(38,0))) as _cdc_valid_from_seq,
  case when to_s is not null then named_struct('s1', cast(to_s as decimal(38,0)), 's2', cast(to_s as decimal(38,0)), 's3', cast(null as decimal(38,0))) end as _cdc_valid_to_seq,
  to_s is null as _cdc_is_current,
  op = 'delete' as _cdc_is_deleted,
  op as _cdc_op,
  named_struct('s1', cast(from_s as decimal(38,0)), 's2', cast(from_s as decimal(38,0)), 's3', cast(null as decimal(38,0))) as _cdc_seq,
  timestamp_seconds(1767225600 + from_commit) as _cdc_commit_ts
from values
  (1, 'a1', 'insert', 10, 10, 20, 20),
  (1, 'a2', 'update', 20, 20, null, null),
  (2, 'b', 'insert', 10, 10, 30, 30),
  (2, 'b', 'delete', 30, 30, null, null),
  (3, 'c', 'insert', 10, 10, null, null),
  (4, 'd1', 'insert', 15, 15, 25, 15),
  (4, 'd2', 'update', 25, 15, null, null)
  as t(id, name, op, from_s, from_commit, to_s, to_commit)
