{{ config(enabled=spark_cdc.format_enabled('aurora_dsql'), **spark_cdc._package_table_config()) }}
{{ spark_cdc.stage_changes('aurora_dsql') }}
