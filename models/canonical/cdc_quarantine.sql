{#- Every rejected raw record, with a stable reason code; the run goes on without it. -#}
{{ config(enabled=(spark_cdc.enabled_formats() | length > 0)) }}
{{ spark_cdc.union_staged('quarantined', [
    'cdc_format', 'source_table', 'reason_code', 'reason_detail', 'raw_value', 'raw_key', 'raw_ref',
    'ingested_at', 'cdc_loaded_at']) }}
