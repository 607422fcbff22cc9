{{ config(materialized='cdc_scd2', unique_key='id', source_table='inventory.products', cdc_format='debezium',
          track_history_columns=['weight'], delete_handling='invalidate', partition_by='name',
          valid_to_current="timestamp'9999-12-31 00:00:00'",
          meta_column_names={'valid_from': 'valid_from', 'valid_to': 'valid_to', 'is_current': 'is_current'}) }}
select * from {{ ref('cdc_changes') }}
