{{ config(materialized='cdc_scd1', unique_key='id', source_table='inventory.products') }}
select * from {{ ref('cdc_changes') }}
