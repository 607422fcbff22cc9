{{ config(materialized='cdc_scd1', unique_key='id', source_table='test.types', cdc_format='qlik_replicate') }}
select * from {{ ref('cdc_changes') }}
