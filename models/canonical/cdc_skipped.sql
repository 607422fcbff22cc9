{#- Raw records that are deliberately not changes (tombstones, logical messages), counted by reason. -#}
{{ config(enabled=(spark_cdc.enabled_formats() | length > 0)) }}
{{ spark_cdc.union_staged('skipped', ['cdc_format', 'source_table', 'reason_code', 'raw_ref', 'ingested_at', 'cdc_loaded_at']) }}
