{{ config(materialized='cdc_scd1', unique_key=['shop', 'order_id'], source_table='/Root/shop/orders', cdc_format='ydb') }}
select * from {{ ref('cdc_changes') }}
