{{ config(materialized='cdc_scd1', unique_key='id', source_table='items', cdc_format='cockroachdb',
          enabled=spark_cdc.format_enabled('cockroachdb')) }}
select * from {{ ref('cdc_changes') }}
