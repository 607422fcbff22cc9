{#- A target whose own SQL breaks the change contract on request (var apply_invalid_input: null_key
    or null_seq nulls the key or seq of id 2; valid passes cdc_changes through). Enabled only when
    the var is set (tests/integration/test_debezium_apply_rules.py). -#}
{%- set mode = var('apply_invalid_input', none) -%}
{{ config(materialized='cdc_scd1', unique_key='id', source_table='reference.items', cdc_format='debezium',
          enabled=(mode is not none)) }}
select
  cdc_format, source_table, op, op_raw,
  {% if mode == 'null_key' %}case when get_json_object(after, '$.id') = '2' then null else key end{% else %}key{% endif %} as key,
  after, before, present_columns, changed_columns,
  {% if mode == 'null_seq' %}case when get_json_object(after, '$.id') = '2' then null else seq end{% else %}seq{% endif %} as seq,
  commit_ts, emitted_at, tx_id, is_snapshot, type_hints, raw_ref, ingested_at, cdc_loaded_at
from {{ ref('cdc_changes') }}
