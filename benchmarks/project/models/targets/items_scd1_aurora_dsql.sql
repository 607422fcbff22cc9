{{ config(materialized='cdc_scd1', unique_key='id', source_table='bench.items', cdc_format='aurora_dsql',
          enabled=spark_cdc.format_enabled('aurora_dsql')) }}
select * from {{ ref('cdc_changes') }}
