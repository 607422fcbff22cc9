{#- A JSON object (text) as map<string, string>: each top-level value as text, strings unquoted,
    null as null, nested objects and arrays as JSON text. Numbers keep every digit up to 38
    (from_json(..., 'map<string, string>') reads fractional numbers as doubles:
    1.10000000000000000001 -> 1.1; the variant reader keeps them as decimals). A name given twice
    keeps its last value, as every reader of images in the package does. -#}
{% macro json_text_map(expr) -%}
  {{ return(adapter.dispatch('json_text_map', 'spark_cdc')(expr)) }}
{%- endmacro %}

{% macro default__json_text_map(expr) -%}
  transform_values({{ spark_cdc._cdc_image_members(expr) }}, (k, v) -> {{ spark_cdc._cdc_member_string('v') }})
{%- endmacro %}

{#- SQL: a change image (JSON object text) as map<string, variant>, one entry per top-level member,
    each member the JSON value as the image carries it (a string stays a string, "118" is not 118).
    Null when the text is not a JSON object. On Spark 3.5 (no VARIANT) each member is its JSON text
    as Spark 4 writes the variant (spark_cdc_json_members), and the _cdc_member_* macros below read
    members in either form. -#}
{% macro _cdc_image_members(expr) -%}
  {%- if spark_cdc._spark3() -%}
  spark_cdc_json_members({{ expr }})
  {%- else -%}
  from_json({{ expr }}, 'map<string, variant>')
  {%- endif -%}
{%- endmacro %}

{#- SQL boolean: an image member is JSON null. -#}
{% macro _cdc_member_is_null(member_expr) -%}
  {%- if spark_cdc._spark3() -%}
  ({{ member_expr }} = 'null')
  {%- else -%}
  is_variant_null({{ member_expr }})
  {%- endif -%}
{%- endmacro %}

{#- SQL: an image member as text (variant_get(member, '$', 'string')): a string unquoted, JSON null as
    null, anything else its JSON text. -#}
{% macro _cdc_member_string(member_expr) -%}
  {%- if spark_cdc._spark3() -%}
  case when {{ member_expr }} = 'null' then null
       when startswith({{ member_expr }}, '"') then from_json(concat('[', {{ member_expr }}, ']'), 'array<string>')[0]
       else {{ member_expr }} end
  {%- else -%}
  variant_get({{ member_expr }}, '$', 'string')
  {%- endif -%}
{%- endmacro %}

{#- SQL: an image member's JSON text (to_json of the variant). -#}
{% macro _cdc_member_json(member_expr) -%}
  {%- if spark_cdc._spark3() -%}{{ member_expr }}{%- else -%}to_json({{ member_expr }}){%- endif -%}
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
  case when {{ spark_cdc._cdc_member_is_null(member_expr) }} then null
       {%- if (data_type | lower | trim) != 'variant' %}
       when not {{ spark_cdc._cdc_is_json_hint(hint_expr) }} then {{ spark_cdc._cdc_member_string(member_expr) }}
       {%- endif %}
       else {{ spark_cdc._cdc_member_json(member_expr) }} end
  {%- else -%}
  {{ spark_cdc._cdc_member_string(member_expr) }}
  {%- endif -%}
{%- endmacro %}

{#- SQL boolean: a type hint names a JSON type (json, jsonb, jsondocument). -#}
{% macro _cdc_is_json_hint(hint_expr) -%}
  coalesce(lower(get_json_object({{ hint_expr }}, '$.type')) in ('json', 'jsonb', 'jsondocument'), false)
{%- endmacro %}

{#- SQL: JSON text as canonical JSON (to_json(try_parse_json(expr))): keys sorted, compact, numbers by
    value; null unless valid JSON without repeated names. -#}
{% macro _cdc_canonical_json(expr) -%}
  {%- if spark_cdc._spark3() -%}
  spark_cdc_json_canonical({{ expr }})
  {%- else -%}
  to_json(try_parse_json({{ expr }}))
  {%- endif -%}
{%- endmacro %}

{#- SQL: a string as an image member holding that JSON string (cast(expr as variant)). -#}
{% macro _cdc_string_member(expr) -%}
  {%- if spark_cdc._spark3() -%}
  regexp_extract(to_json(array({{ expr }})), '(?s)^\\[(.*)\\]$', 1)
  {%- else -%}
  cast({{ expr }} as variant)
  {%- endif -%}
{%- endmacro %}

{#- SQL: a map of image members as JSON object text (to_json of a map<string, variant>), in map order. -#}
{% macro _cdc_members_object_json(map_expr) -%}
  {%- if spark_cdc._spark3() -%}
  concat('{', array_join(transform(map_entries({{ map_expr }}),
    _cdc_e -> concat(regexp_extract(to_json(array(_cdc_e.key)), '(?s)^\\[(.*)\\]$', 1), ':', _cdc_e.value)), ','), '}')
  {%- else -%}
  to_json({{ map_expr }})
  {%- endif -%}
{%- endmacro %}
