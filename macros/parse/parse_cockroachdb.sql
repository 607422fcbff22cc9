{#- CockroachDB changefeed JSON messages (wrapped, enriched, bare, row and key_only envelopes;
    resolved timestamps) -> canonical change rows plus quarantined and skipped records. Takes the
    name of a CTE shaped like spark_cdc.raw_messages(); see parse_debezium for the output columns.
    Each message is parsed once into a VARIANT (numbers keep their exact decimal value, which
    Spark's JSON-to-string reader would round to a double) and read through explicit typed shapes;
    on Spark 3.5, which has no VARIANT, into the JSON text Spark 4 writes for it, read by the
    package's UDFs (macros/parse/json_values.sql), with the same rows as a result. -#}
{% macro parse_cockroachdb(raw_cte) -%}
  {{ return(adapter.dispatch('parse_cockroachdb', 'spark_cdc')(raw_cte)) }}
{%- endmacro %}

{% macro default__parse_cockroachdb(raw_cte) -%}
  {%- set opts = spark_cdc._cockroachdb_options() %}
  cockroachdb_parsed as (
    {{ spark_cdc._cockroachdb_parsed(raw_cte) }}
  ),

  {#- A sinkless changefeed's rows, {"key": "<key JSON>", "table": "t", "value": "<value JSON>"}, are
      unwrapped: the inner value (a separate payload) is parsed here, once. #}
  cockroachdb_sinkless as (
    {{ spark_cdc._cockroachdb_sinkless('cockroachdb_parsed') }}
  ),

  cockroachdb_message as (
    {{ spark_cdc._cockroachdb_message('cockroachdb_sinkless') }}
  ),

  cockroachdb_envelope as (
    {{ spark_cdc._cockroachdb_envelope('cockroachdb_message') }}
  ),

  cockroachdb_fields as (
    {{ spark_cdc._cockroachdb_fields('cockroachdb_envelope', opts) }}
  ),

  cockroachdb_ops as (
    {{ spark_cdc._cockroachdb_ops('cockroachdb_fields', opts) }}
  ),

  cockroachdb_keyed as (
    {{ spark_cdc._cockroachdb_keyed('cockroachdb_ops') }}
  ),

  cockroachdb_classified as (
    {{ spark_cdc._cockroachdb_classified('cockroachdb_keyed', opts) }}
  ),

  cockroachdb_reasoned as (
    {{ spark_cdc._cockroachdb_reasoned('cockroachdb_classified', opts) }}
  )

  {{ spark_cdc._cockroachdb_staged_row('cockroachdb_reasoned', opts) }}
{%- endmacro %}
