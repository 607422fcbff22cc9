{{ config(materialized='cdc_scd1', unique_key=['order_id', 'item_id'], source_table='public.order_items', cdc_format='aurora_dsql') }}
select * from {{ ref('cdc_changes') }}
