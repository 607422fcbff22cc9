{#- Target of the randomized apply reference suite (tests/integration/test_debezium_apply_reference.py):
    many scenarios on disjoint keys of one source table, no truncates. -#}
{{ config(materialized='cdc_scd1', unique_key='id', source_table='reference.items', cdc_format='debezium') }}
select * from {{ ref('cdc_changes') }}
