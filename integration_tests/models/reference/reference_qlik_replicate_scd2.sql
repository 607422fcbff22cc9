{#- Randomized reference suite (tests/integration/test_apply_reference_formats.py): the history (one row per version) of
    the generated table reference.qlik_items as Qlik Replicate sends its changes. Enabled only for that suite
    (SPARK_CDC_IT_REFERENCE=1) and when its format is. -#}
{{ config(materialized='cdc_scd2', unique_key='id', source_table='reference.qlik_items', cdc_format='qlik_replicate',
          enabled=(env_var('SPARK_CDC_IT_REFERENCE', '0') == '1'
                   and 'qlik_replicate' in env_var('SPARK_CDC_IT_FORMATS', 'debezium aurora_dsql qlik_replicate ydb cockroachdb').split())) }}
select * from {{ ref('cdc_changes') }}
