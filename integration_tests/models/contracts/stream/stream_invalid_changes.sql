{#- A hand-made change stream shaped like cdc_changes, broken on purpose: 8 violations in 6 of its
    9 rows (tests/integration/test_contracts_stream.py). The enabled formats there are debezium and
    aurora_dsql. -#}
{{ config(materialized='table') }}
select
  cdc_format, source_table, op, key,
  case when has_seq then named_struct('s1', cast(s1 as decimal(38,0)), 's2', cast(s2 as decimal(38,0)), 's3', cast(s3 as decimal(38,0))) end as seq
from values
  -- valid: an insert, a truncate (no key), a change ordered by landing order (s3, as YDB does)
  ('debezium', 'inventory.products', 'insert', '{"id":"1"}', 1, 1, null, true),
  ('aurora_dsql', 'public.orders', 'truncate', null, 2, null, null, true),
  ('aurora_dsql', 'public.orders', 'upsert', '{"order_id":"1"}', null, null, 17, true),
  -- key_null
  ('debezium', 'inventory.products', 'update', null, 3, 1, null, true),
  -- seq_null (the whole struct)
  ('debezium', 'inventory.products', 'delete', '{"id":"2"}', 4, 1, null, false),
  -- seq_s1_null
  ('debezium', 'inventory.products', 'upsert', '{"id":"3"}', null, 1, null, true),
  -- op_invalid
  ('debezium', 'inventory.products', 'merge', '{"id":"4"}', 5, 1, null, true),
  -- source_table_null + op_invalid (null) + key_null
  ('debezium', null, null, null, 6, 1, null, true),
  -- cdc_format_not_enabled
  ('kafka', 'inventory.products', 'insert', '{"id":"5"}', 7, 1, null, true)
  as t(cdc_format, source_table, op, key, s1, s2, s3, has_seq)
