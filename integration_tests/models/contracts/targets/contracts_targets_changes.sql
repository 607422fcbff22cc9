{#- A hand-made change stream shaped like cdc_changes (debezium) for the broken target fixtures.
    contracts.items: 1 inserted (10) and updated (20); 2 inserted (10) and deleted (30); 3 inserted
    (10); 4 inserted (15) and updated (25) in one transaction (same commit time).
    contracts.truncated: 1 inserted (10), the table truncated (20), 2 inserted (30). -#}
{{ config(materialized='view') }}
select
  'debezium' as cdc_format,
  source_table,
  op,
  case op when 'insert' then 'c' when 'update' then 'u' when 'delete' then 'd' else 't' end as op_raw,
  case when id is not null then to_json(named_struct('id', cast(id as string))) end as key,
  case when op in ('insert', 'update') then to_json(named_struct('id', id, 'name', name)) end as after,
  case when op = 'delete' then to_json(named_struct('id', id, 'name', name)) end as before,
  cast(null as array<string>) as present_columns,
  cast(null as array<string>) as changed_columns,
  named_struct('s1', cast(s as decimal(38,0)), 's2', cast(s as decimal(38,0)), 's3', cast(null as decimal(38,0))) as seq,
  timestamp_seconds(1767225600 + commit_s) as commit_ts,
  timestamp_seconds(1767225600 + commit_s) as emitted_at,
  cast(null as string) as tx_id,
  false as is_snapshot,
  map('id', 'int32', 'name', 'string') as type_hints,
  named_struct('relation', 'contracts_targets_changes', 'partition', '0',
               'order', cast(s as decimal(38,0)), 'fragment_count', 1) as raw_ref,
  timestamp_seconds(1767225600 + s) as ingested_at,
  timestamp'2026-01-02 00:00:00' as cdc_loaded_at
from values
  ('contracts.items', 'insert', 1, 'a1', 10, 10),
  ('contracts.items', 'update', 1, 'a2', 20, 20),
  ('contracts.items', 'insert', 2, 'b', 10, 10),
  ('contracts.items', 'delete', 2, 'b', 30, 30),
  ('contracts.items', 'insert', 3, 'c', 10, 10),
  ('contracts.items', 'insert', 4, 'd1', 15, 15),
  ('contracts.items', 'update', 4, 'd2', 25, 15),
  ('contracts.truncated', 'insert', 1, 'a', 10, 10),
  ('contracts.truncated', 'truncate', null, null, 20, 20),
  ('contracts.truncated', 'insert', 2, 'b', 30, 30)
  as t(source_table, op, id, name, s, commit_s)
