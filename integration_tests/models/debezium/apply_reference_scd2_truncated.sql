{#- SCD2 target of the randomized apply reference suite for histories with truncates: a truncate affects
    the whole source table, so these scenarios have a source table (and a target) of their own. -#}
{{ config(materialized='cdc_scd2', unique_key='id', source_table='reference.items_scd2_truncated', cdc_format='debezium') }}
select * from {{ ref('cdc_changes') }}
