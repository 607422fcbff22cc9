{#- SCD2 target of the randomized apply reference suite (tests/integration/test_debezium_apply_reference.py):
    many scenarios on disjoint keys of one source table, no truncates. Its own source table, because
    its deliveries differ from the SCD1 targets' (partial images may arrive before their base). -#}
{{ config(materialized='cdc_scd2', unique_key='id', source_table='reference.items_scd2', cdc_format='debezium') }}
select * from {{ ref('cdc_changes') }}
