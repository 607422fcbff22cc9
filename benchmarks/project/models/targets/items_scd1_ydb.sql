{{ config(materialized='cdc_scd1', unique_key='id', source_table='/Root/bench/items', cdc_format='ydb',
          enabled=spark_cdc.format_enabled('ydb')) }}
select * from {{ ref('cdc_changes') }}
