{#- THE canonical change stream: every change of every enabled format, ready to apply. Changes in a
    sequence conflict (cdc_sequence_conflicts) are left out: they are in cdc_quarantine instead. -#}
{{ config(enabled=(spark_cdc.enabled_formats() | length > 0)) }}
with staged as (
  {{ spark_cdc.union_staged('change', [
      'cdc_format', 'source_table', 'op', 'op_raw', 'key', 'after', 'before', 'present_columns',
      'changed_columns', 'seq', 'commit_ts', 'emitted_at', 'tx_id', 'is_snapshot', 'type_hints',
      'raw_ref', 'ingested_at', 'cdc_loaded_at']) }}
),

conflicts as (
  select
    cdc_format,
    source_table,
    key,
    {{ spark_cdc.change_order_key('seq') }} as _ord,
    order_scope
  from {{ ref('cdc_sequence_conflicts') }}
  where row_kind = 'conflict'
)

select s.*
from staged as s
left anti join conflicts as c
  on
    s.cdc_format <=> c.cdc_format and s.source_table <=> c.source_table and s.key = c.key
    and {{ spark_cdc.change_order_key('s.seq') }} = c._ord
    and {{ spark_cdc._sequence_order_scope('s.seq', 's.raw_ref') }} <=> c.order_scope
