{{ config(enabled=spark_cdc.format_enabled('cockroachdb')) }}
{{ spark_cdc.stage_changes('cockroachdb') }}
