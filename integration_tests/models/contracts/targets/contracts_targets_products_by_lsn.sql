{#- A real cdc_scd1 target of inventory.products that keeps deleted keys flagged
    (delete_handling='flag') and orders changes by a column of its input (sequence_by). -#}
{{ config(materialized='cdc_scd1', unique_key='id', source_table='inventory.products', cdc_format='debezium',
          delete_handling='flag', sequence_by='change_lsn') }}
select * from {{ ref('contracts_targets_products_input') }}
