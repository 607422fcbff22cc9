{#- products on the MERGE storage of cdc_scd1, on real Delta Lake or Apache Iceberg: built only in a
    test process whose Spark session has that format (SPARK_CDC_TABLE_FORMAT=delta|iceberg,
    tests/integration/test_lakehouse_merge.py), beside the parquet rewrite `products`. Its state
    table has Delta's change data feed, or Iceberg's merge-on-read writes. -#}
{{ config(materialized='cdc_scd1', unique_key='id', source_table='inventory.products', cdc_format='debezium',
          file_format=env_var('SPARK_CDC_TABLE_FORMAT', 'delta'),
          enabled=(env_var('SPARK_CDC_TABLE_FORMAT', '') in ('delta', 'iceberg')),
          tblproperties=({'delta.enableChangeDataFeed': 'true'} if env_var('SPARK_CDC_TABLE_FORMAT', '') == 'delta'
                         else {'write.merge.mode': 'merge-on-read', 'write.update.mode': 'merge-on-read',
                               'write.delete.mode': 'merge-on-read'})) }}
select * from {{ ref('cdc_changes') }}
