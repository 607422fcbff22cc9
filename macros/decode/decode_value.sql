{#- SQL expression: a value from a change image (text, as from_json(..., 'map<string,string>') gives
    it) converted to the target column's declared Spark type. `type_hint_expr` is a SQL expression of
    the column's entry in the change's type_hints (may be null); `cdc_format` picks the format's own
    decoder, `spark_cdc.decode_<format>_value(text_expr, data_type, type_hint_expr)`, when the package
    (or the root project) defines one. Decoding never raises: a value that does not fit becomes null. -#}
{% macro decode_value(text_expr, data_type, type_hint_expr=none, cdc_format=none) -%}
  {{ return(adapter.dispatch('decode_value', 'spark_cdc')(text_expr, data_type, type_hint_expr, cdc_format)) }}
{%- endmacro %}

{% macro default__decode_value(text_expr, data_type, type_hint_expr=none, cdc_format=none) -%}
  {%- set hint = type_hint_expr if type_hint_expr else 'cast(null as string)' -%}
  {%- set decoder_name = 'decode_' ~ cdc_format ~ '_value' -%}
  {%- if cdc_format and spark_cdc.get(decoder_name) is not none -%}
    {{ spark_cdc.get(decoder_name)(text_expr, data_type, hint) }}
  {%- else -%}
    {{ spark_cdc.decode_generic_value(text_expr, data_type) }}
  {%- endif -%}
{%- endmacro %}

{#- SQL expression: `text_expr` as `data_type` by the target type alone (no envelope hint): strings
    as they are, binary from base64 (JSON carries bytes as base64), everything else by try_cast. -#}
{% macro decode_generic_value(text_expr, data_type) -%}
  {{ return(adapter.dispatch('decode_generic_value', 'spark_cdc')(text_expr, data_type)) }}
{%- endmacro %}

{% macro default__decode_generic_value(text_expr, data_type) -%}
  {%- set t = data_type | lower | trim -%}
  {%- if t in ('string', 'text') or t.startswith('varchar') or t.startswith('char') -%}
    {{ text_expr }}
  {%- elif t == 'binary' -%}
    try_to_binary({{ text_expr }}, 'base64')
  {%- else -%}
    try_cast({{ text_expr }} as {{ data_type }})
  {%- endif -%}
{%- endmacro %}
