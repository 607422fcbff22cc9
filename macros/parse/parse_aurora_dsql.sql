{#- Amazon Aurora DSQL CDC records -> canonical change rows plus quarantined and skipped records. Takes
    the name of a CTE shaped like spark_cdc.raw_messages(); see parse_debezium for the output columns.
    `full` records become changes; `chunked` main records and `fragment` records are staged as skipped
    (chunked_buffered / fragment_buffered) and carry what reassembly needs (see
    reassemble_aurora_dsql_chunks). Each payload is parsed once, with an explicit schema. -#}
{% macro parse_aurora_dsql(raw_cte) -%}
  {{ return(adapter.dispatch('parse_aurora_dsql', 'spark_cdc')(raw_cte)) }}
{%- endmacro %}

{% macro default__parse_aurora_dsql(raw_cte) -%}
  aurora_dsql_parsed as (
    {{ spark_cdc._aurora_dsql_parsed(raw_cte) }}
  ),

  aurora_dsql_fields as (
    {{ spark_cdc._aurora_dsql_fields('aurora_dsql_parsed') }}
  ),

  aurora_dsql_screened as (
    {{ spark_cdc._aurora_dsql_screened('aurora_dsql_fields') }}
  ),

  aurora_dsql_classified as (
    {{ spark_cdc._aurora_dsql_changes('aurora_dsql_screened', 'invalid_envelope') }}
  )

  {{ spark_cdc._aurora_dsql_staged_row('aurora_dsql_classified') }}
{%- endmacro %}
