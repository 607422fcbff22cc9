{{ config(enabled=spark_cdc.format_enabled('ydb')) }}
{{ spark_cdc.stage_changes('ydb') }}
