{{ config(enabled=spark_cdc.format_enabled('qlik_replicate'), **spark_cdc._package_table_config()) }}
{{ spark_cdc.stage_changes('qlik_replicate') }}
