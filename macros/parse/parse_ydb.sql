{#- YDB changefeed messages (JSON and Debezium-compatible modes) -> canonical change rows plus
    quarantined and skipped records. Takes the name of a CTE shaped like spark_cdc.raw_messages();
    see parse_debezium for the output columns and docs/formats/ydb.md for the mapping. Each payload
    is parsed once with one explicit schema that covers both modes. -#}
{% macro parse_ydb(raw_cte) -%}
  {{ return(adapter.dispatch('parse_ydb', 'spark_cdc')(raw_cte)) }}
{%- endmacro %}

{% macro default__parse_ydb(raw_cte) -%}
  {%- set settings = spark_cdc._ydb_settings() -%}
  {#- Spark 3.5 has no VARIANT: members are JSON text there (see _ydb_exact_members). -#}
  {%- set spark3 = spark_cdc._spark3() -%}
  ydb_parsed as (
    {{ spark_cdc._ydb_parsed(raw_cte, spark3) }}
  ),

  ydb_mode as (
    {{ spark_cdc._ydb_mode('ydb_parsed') }}
  ),

  {#- The message key (Debezium-compatible mode only) is parsed where it is used, not for every
      message. #}
  ydb_keyed as (
    {{ spark_cdc._ydb_keyed('ydb_mode', settings, spark3) }}
  ),

  ydb_images as (
    {{ spark_cdc._ydb_images('ydb_keyed') }}
  ),

  ydb_classified as (
    {{ spark_cdc._ydb_classified('ydb_images', settings, spark3) }}
  )

  {{ spark_cdc._ydb_staged_row('ydb_classified', settings, spark3) }}
{%- endmacro %}
