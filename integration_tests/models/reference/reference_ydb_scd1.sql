{#- Randomized reference suite (tests/integration/test_apply_reference_formats.py): the current state of
    the generated table /Root/reference/items as YDB (JSON changefeed) sends its changes. Enabled only for that suite
    (SPARK_CDC_IT_REFERENCE=1) and when its format is. -#}
{{ config(materialized='cdc_scd1', unique_key='id', source_table='/Root/reference/items', cdc_format='ydb',
          enabled=(env_var('SPARK_CDC_IT_REFERENCE', '0') == '1'
                   and 'ydb' in env_var('SPARK_CDC_IT_FORMATS', 'debezium aurora_dsql qlik_replicate ydb cockroachdb').split())) }}
select * from {{ ref('cdc_changes') }}
