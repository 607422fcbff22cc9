{#- products on the MERGE storage of cdc_scd1, on real Delta Lake or Apache Iceberg: built only in a
    test process whose Spark session has that format (SPARK_CDC_TABLE_FORMAT=delta|iceberg,
    tests/integration/test_lakehouse_merge.py), beside the parquet rewrite `products`. -#}
{{ config(materialized='cdc_scd1', unique_key='id', source_table='inventory.products', cdc_format='debezium',
          file_format=env_var('SPARK_CDC_TABLE_FORMAT', 'delta'),
          enabled=(env_var('SPARK_CDC_TABLE_FORMAT', '') in ('delta', 'iceberg'))) }}
select * from {{ ref('cdc_changes') }}
