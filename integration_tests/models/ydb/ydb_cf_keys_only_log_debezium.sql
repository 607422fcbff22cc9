{{ config(materialized='cdc_scd1', unique_key='key', source_table='/Root/Table', cdc_format='ydb',
          enabled=(var('spark_cdc_ydb_conformance', false) and spark_cdc.format_enabled('ydb'))) }}
{#- Scenario KeysOnlyLogDebezium: its messages are landed in raw partition 9. -#}
select * from {{ ref('cdc_changes') }} where raw_ref.partition = '9'
