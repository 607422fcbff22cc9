{#- A JSON object (text) as map<string, string>: each top-level value as its JSON text, strings
    unquoted, null as null. Numbers keep every digit: from_json(..., 'map<string, string>') reads
    fractional numbers as doubles (1.10000000000000000001 -> 1.1), the variant parser does not. -#}
{% macro json_text_map(expr) -%}
  {{ return(adapter.dispatch('json_text_map', 'spark_cdc')(expr)) }}
{%- endmacro %}

{% macro default__json_text_map(expr) -%}
  try_variant_get(try_parse_json({{ expr }}), '$', 'map<string, string>')
{%- endmacro %}
