{#- Randomized reference suite (tests/integration/test_apply_reference_formats.py): the history (one row per version) of
    the generated table reference.dsql_items as Aurora DSQL sends its changes. Enabled only for that suite
    (SPARK_CDC_IT_REFERENCE=1) and when its format is. -#}
{{ config(materialized='cdc_scd2', unique_key='id', source_table='reference.dsql_items', cdc_format='aurora_dsql',
          enabled=(env_var('SPARK_CDC_IT_REFERENCE', '0') == '1'
                   and 'aurora_dsql' in env_var('SPARK_CDC_IT_FORMATS', 'debezium aurora_dsql qlik_replicate ydb cockroachdb').split())) }}
select * from {{ ref('cdc_changes') }}
