{{ config(materialized='cdc_scd1', unique_key='key', source_table='/Root/Table') }}
select * from {{ ref('cdc_changes') }}
