{{ config(materialized='cdc_scd1', unique_key='id', source_table='bench.items', cdc_format='debezium',
          enabled=spark_cdc.format_enabled('debezium')) }}
select * from {{ ref('cdc_changes') }}
