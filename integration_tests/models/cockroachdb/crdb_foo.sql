{{ config(materialized='cdc_scd1', unique_key='a', source_table='foo', cdc_format='cockroachdb') }}
select * from {{ ref('cdc_changes') }}
