{#- Misuse of the target contract tests (enabled only when SPARK_CDC_IT_CONTRACTS_MISUSE=1): an SCD2
    test on this cdc_scd1 target, and an SCD1 stream test on a sequence_by target without a change
    relation that carries the sequence_by column. Both must fail to compile with a clear message. -#}
{{ config(materialized='cdc_scd1', unique_key='id', source_table='inventory.products', cdc_format='debezium',
          sequence_by='change_lsn', enabled=env_var('SPARK_CDC_IT_CONTRACTS_MISUSE', '0') == '1') }}
select * from {{ ref('contracts_targets_products_input') }}
