{#- products_history with file_format='delta': the MERGE strategy of cdc_scd2. Built only by
    tests/integration/test_debezium_storage.py, which runs the MERGE emulated on parquet
    (integration_tests/macros/merge_emulation.sql): Spark here has no Delta jars. -#}
{{ config(materialized='cdc_scd2', unique_key='id', source_table='inventory.products', cdc_format='debezium',
          file_format='delta', enabled=(env_var('SPARK_CDC_IT_EMULATE_MERGE', '') != '')) }}
select * from {{ ref('cdc_changes') }}
