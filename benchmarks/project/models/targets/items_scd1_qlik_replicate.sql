{{ config(materialized='cdc_scd1', unique_key='id', source_table='bench.items', cdc_format='qlik_replicate',
          enabled=spark_cdc.format_enabled('qlik_replicate')) }}
select * from {{ ref('cdc_changes') }}
