{{ config(materialized='cdc_scd1', unique_key='id', source_table='public.all_types', cdc_format='debezium') }}
select * from {{ ref('cdc_changes') }}
