{{ config(materialized='cdc_scd2', unique_key='a', source_table='foo') }}
select * from {{ ref('cdc_changes') }}
