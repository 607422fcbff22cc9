{{ config(materialized='cdc_scd1', unique_key='a', source_table='foo') }}
select * from {{ ref('cdc_changes') }}
