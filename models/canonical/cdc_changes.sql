{#- THE canonical change stream: every change of every enabled format, ready to apply. -#}
{{ config(enabled=(spark_cdc.enabled_formats() | length > 0)) }}
{{ spark_cdc.union_staged('change', [
    'cdc_format', 'source_table', 'op', 'op_raw', 'key', 'after', 'before', 'present_columns',
    'changed_columns', 'seq', 'commit_ts', 'emitted_at', 'tx_id', 'is_snapshot', 'type_hints',
    'raw_ref', 'ingested_at', 'cdc_loaded_at']) }}
