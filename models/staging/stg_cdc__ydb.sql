{{ config(enabled=spark_cdc.format_enabled('ydb'), **spark_cdc._package_table_config()) }}
{{ spark_cdc.stage_changes('ydb') }}
