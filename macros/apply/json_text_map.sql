{#- A JSON object (text) as map<string, string>: each top-level value as text, strings unquoted,
    null as null, nested objects and arrays as JSON text. Numbers keep every digit up to 38
    (from_json(..., 'map<string, string>') reads fractional numbers as doubles:
    1.10000000000000000001 -> 1.1; the variant reader keeps them as decimals). A name given twice
    keeps its last value, as every reader of images in the package does. -#}
{% macro json_text_map(expr) -%}
  {{ return(adapter.dispatch('json_text_map', 'spark_cdc')(expr)) }}
{%- endmacro %}

{% macro default__json_text_map(expr) -%}
  transform_values({{ spark_cdc._cdc_image_members(expr) }}, (k, v) -> variant_get(v, '$', 'string'))
{%- endmacro %}

{#- SQL: a change image (JSON object text) as map<string, variant>, one entry per top-level member,
    each member the JSON value as the image carries it (a string stays a string, "118" is not 118).
    Null when the text is not a JSON object. -#}
{% macro _cdc_image_members(expr) -%}
  from_json({{ expr }}, 'map<string, variant>')
{%- endmacro %}

{#- SQL: the text a value decoder reads for image member `member_expr` (a variant) of a column with
    type hint `hint_expr`: the value as text (strings unquoted, objects and arrays as JSON text), or,
    for a JSON-typed column of a format that embeds JSON values in its images (YDB Json and
    JsonDocument, CockroachDB JSONB, marked by the envelope's or the table's column_types hint) and
    for a `variant` target column of those formats, the member's JSON text: a JSON string keeps its
    quotes, so "118" stays a string (JSON null reads as SQL null). Formats that carry JSON columns as strings holding the JSON
    text (Debezium, Aurora DSQL, Qlik Replicate) read that text as it is. JSON text is written as
    Spark's VARIANT writes it: compact, object keys sorted, numbers by value. -#}
{% macro _cdc_member_text(member_expr, hint_expr, cdc_format, data_type) -%}
  {%- if cdc_format in ('ydb', 'cockroachdb') -%}
  case when is_variant_null({{ member_expr }}) then null
       {%- if (data_type | lower | trim) != 'variant' %}
       when not {{ spark_cdc._cdc_is_json_hint(hint_expr) }} then variant_get({{ member_expr }}, '$', 'string')
       {%- endif %}
       else to_json({{ member_expr }}) end
  {%- else -%}
  variant_get({{ member_expr }}, '$', 'string')
  {%- endif -%}
{%- endmacro %}

{#- SQL boolean: a type hint names a JSON type (json, jsonb, jsondocument). -#}
{% macro _cdc_is_json_hint(hint_expr) -%}
  coalesce(lower(get_json_object({{ hint_expr }}, '$.type')) in ('json', 'jsonb', 'jsondocument'), false)
{%- endmacro %}
