{#- SQL expression: a text value from a change image converted to the declared Spark type.
    Conversions never raise (try_cast): a value that does not fit becomes null. The formats issue
    extends this with envelope type hints (Debezium logical types, DSQL encodings). -#}
{% macro decode_value(text_expr, data_type, type_hint_expr=none, cdc_format=none) -%}
  {{ return(adapter.dispatch('decode_value', 'spark_cdc')(text_expr, data_type, type_hint_expr, cdc_format)) }}
{%- endmacro %}

{% macro default__decode_value(text_expr, data_type, type_hint_expr=none, cdc_format=none) -%}
  {%- set t = data_type | lower | trim -%}
  {%- if t in ('string', 'varchar', 'text') or t.startswith('varchar') or t.startswith('char') -%}
    {{ text_expr }}
  {%- else -%}
    try_cast({{ text_expr }} as {{ data_type }})
  {%- endif -%}
{%- endmacro %}
