{{ config(materialized='cdc_scd1', unique_key='order_id', source_table='public.orders', cdc_format='debezium') }}
select * from {{ ref('cdc_changes') }}
