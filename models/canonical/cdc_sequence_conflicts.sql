{#- Changes whose (format, source table, key, seq) is shared by a different change: kept out of
    cdc_changes, listed in cdc_quarantine (sequence_conflict). See docs/apply_semantics.md. -#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='fail',
    enabled=(spark_cdc.enabled_formats() | length > 0),
    **spark_cdc._package_table_config()) }}
{{ spark_cdc.sequence_conflicts_sql() }}
