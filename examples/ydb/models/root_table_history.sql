{{ config(materialized='cdc_scd2', unique_key='key', source_table='/Root/Table') }}
select * from {{ ref('cdc_changes') }}
