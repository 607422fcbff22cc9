{{ config(materialized='cdc_scd1', unique_key=['region', 'id'], source_table='composite', cdc_format='cockroachdb') }}
select * from {{ ref('cdc_changes') }}
