{{ config(materialized='cdc_scd1', unique_key='k', source_table='kv', cdc_format='cockroachdb') }}
select * from {{ ref('cdc_changes') }}
