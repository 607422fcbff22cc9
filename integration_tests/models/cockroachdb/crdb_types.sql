{{ config(materialized='cdc_scd1', unique_key='id', source_table='crdb_types', cdc_format='cockroachdb') }}
select * from {{ ref('cdc_changes') }}
