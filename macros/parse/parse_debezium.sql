{#- Debezium (PostgreSQL connector) JSON messages -> canonical change rows plus quarantined and
    skipped records. Takes the name of a CTE shaped like spark_cdc.raw_messages(). Each payload is
    parsed once with an explicit schema; with or without the converter's `schema` block. -#}
{% macro parse_debezium(raw_cte) -%}
  {{ return(adapter.dispatch('parse_debezium', 'spark_cdc')(raw_cte)) }}
{%- endmacro %}

{% macro default__parse_debezium(raw_cte) -%}
  debezium_parsed as (
    {{ spark_cdc._debezium_parsed(raw_cte) }}
  ),

  debezium_envelope as (
    {{ spark_cdc._debezium_envelope('debezium_parsed') }}
  ),

  debezium_fields as (
    {{ spark_cdc._debezium_fields('debezium_envelope') }}
  ),

  {#- The message key is parsed only where it is needed (a table not configured, or a key column
      missing from the image): it is written into the expressions, not computed as a column for
      every message. #}
  debezium_key_values as (
    {{ spark_cdc._debezium_key_values('debezium_fields') }}
  ),

  debezium_keyed as (
    {{ spark_cdc._debezium_keyed('debezium_key_values') }}
  ),

  debezium_classified as (
    {{ spark_cdc._debezium_classified('debezium_keyed') }}
  )

  {{ spark_cdc._debezium_staged_row('debezium_classified') }}
{%- endmacro %}
