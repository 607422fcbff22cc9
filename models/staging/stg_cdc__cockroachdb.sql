{{ config(enabled=spark_cdc.format_enabled('cockroachdb'), **spark_cdc._package_table_config()) }}
{{ spark_cdc.stage_changes('cockroachdb') }}
