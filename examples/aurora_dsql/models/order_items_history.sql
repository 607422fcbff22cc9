{{ config(materialized='cdc_scd2', unique_key=['order_id', 'item_id'], source_table='public.order_items') }}
select * from {{ ref('cdc_changes') }}
