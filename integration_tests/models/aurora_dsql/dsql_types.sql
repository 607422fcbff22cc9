{{ config(materialized='cdc_scd1', unique_key='id', source_table='public.dsql_types', cdc_format='aurora_dsql') }}
select * from {{ ref('cdc_changes') }}
