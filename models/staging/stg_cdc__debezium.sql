{{ config(enabled=spark_cdc.format_enabled('debezium')) }}
{{ spark_cdc.stage_changes('debezium') }}
