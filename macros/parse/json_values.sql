{#- SQL over parsed JSON values, for parsers that keep a message as one parsed value (CockroachDB):
    on Spark 4 the value is a VARIANT; on Spark 3.5, which has no VARIANT, it is the JSON
    text Spark 4's to_json writes for that VARIANT (spark_cdc_json_canonical: keys sorted, compact,
    numbers by value). Each macro gives the same value on both lines; the line is read once per run
    (spark_cdc._spark3()). -#}

{#- SQL: `text` parsed (try_parse_json): null unless valid JSON without repeated names. -#}
{% macro _jv_parse(text) -%}
  {%- if spark_cdc._spark3() -%}spark_cdc_json_canonical({{ text }}){%- else -%}try_parse_json({{ text }}){%- endif -%}
{%- endmacro %}

{#- SQL: the SQL type of a parsed value. -#}
{% macro _jv_type() -%}
  {{- 'string' if spark_cdc._spark3() else 'variant' -}}
{%- endmacro %}

{#- SQL: a JSON object's members as map<string, parsed value> (null unless an object). -#}
{% macro _jv_members(v) -%}
  {%- if spark_cdc._spark3() -%}spark_cdc_json_members({{ v }}){%- else -%}try_variant_get({{ v }}, '$', 'map<string, variant>'){%- endif -%}
{%- endmacro %}

{#- SQL: a JSON object's members as map<string, string>, each as _jv_string reads it. -#}
{% macro _jv_string_members(v) -%}
  {%- if spark_cdc._spark3() -%}
  transform_values(spark_cdc_json_members({{ v }}), (_jv_k, _jv_m) -> {{ spark_cdc._cdc_member_string('_jv_m') }})
  {%- else -%}
  try_variant_get({{ v }}, '$', 'map<string, string>')
  {%- endif -%}
{%- endmacro %}

{#- SQL: member `name` of a JSON object as a parsed value; null when absent or not an object. -#}
{% macro _jv_member(v, name) -%}
  {%- if spark_cdc._spark3() -%}
  try_element_at(spark_cdc_json_members({{ v }}), {{ spark_cdc._sql_string(name) }})
  {%- else -%}
  try_variant_get({{ v }}, {{ spark_cdc._sql_string('$.' ~ name) }}, 'variant')
  {%- endif -%}
{%- endmacro %}

{#- SQL: member `name` of a JSON object as text (_jv_string); null when absent or not an object. -#}
{% macro _jv_member_string(v, name) -%}
  {%- if spark_cdc._spark3() -%}
  {{ spark_cdc._cdc_member_string('try_element_at(spark_cdc_json_members(' ~ v ~ '), ' ~ spark_cdc._sql_string(name) ~ ')') }}
  {%- else -%}
  try_variant_get({{ v }}, {{ spark_cdc._sql_string('$.' ~ name) }}, 'string')
  {%- endif -%}
{%- endmacro %}

{#- SQL: a JSON array's elements as array<string> (_jv_string each); null unless an array. -#}
{% macro _jv_string_array(v) -%}
  {%- if spark_cdc._spark3() -%}
  transform(spark_cdc_json_elements({{ v }}), _jv_e -> {{ spark_cdc._cdc_member_string('_jv_e') }})
  {%- else -%}
  try_variant_get({{ v }}, '$', 'array<string>')
  {%- endif -%}
{%- endmacro %}

{#- SQL boolean: a value is a JSON string. -#}
{% macro _jv_is_string(v) -%}
  {%- if spark_cdc._spark3() -%}startswith({{ v }}, '"'){%- else -%}schema_of_variant({{ v }}) = 'STRING'{%- endif -%}
{%- endmacro %}

{#- SQL: a JSON object read as a struct of `fields` ([name, type] pairs, type variant, string or
    array<string>; variant fields hold parsed values). Null unless an object; a field whose value
    does not convert is null. -#}
{% macro _jv_struct(v, fields) -%}
  {%- if spark_cdc._spark3() -%}
  case when spark_cdc_json_members({{ v }}) is not null then named_struct(
    {%- for name, type in fields %}
    {%- set member = 'try_element_at(spark_cdc_json_members(' ~ v ~ '), ' ~ spark_cdc._sql_string(name) ~ ')' %}
    {{ spark_cdc._sql_string(name) }},
    {%- if type == 'variant' %} {{ member }}
    {%- elif type == 'string' %} {{ spark_cdc._cdc_member_string(member) }}
    {%- else %} {{ spark_cdc._jv_string_array(member) }}
    {%- endif %}{{ ',' if not loop.last }}
    {%- endfor %}) end
  {%- else -%}
  try_variant_get({{ v }}, '$', {{ spark_cdc._sql_string('struct<' ~ spark_cdc._jv_struct_fields(fields) ~ '>') }})
  {%- endif -%}
{%- endmacro %}

{#- The field list of _jv_struct's Spark 4 struct type. -#}
{% macro _jv_struct_fields(fields) -%}
  {%- for name, type in fields -%}
    {{ spark_cdc.quote_identifier(name) if name in ('table', 'schema', '__crdb__') else name }}: {{ type }}{{ ', ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}

{#- SQL: member `name` of a JSON object read as `sql_type` (a Spark type of strings, booleans,
    arrays, maps and structs); null when absent, not an object or not of that shape. -#}
{% macro _jv_member_as(v, name, sql_type) -%}
  {%- if spark_cdc._spark3() -%}
  from_json(try_element_at(spark_cdc_json_members({{ v }}), {{ spark_cdc._sql_string(name) }}), {{ spark_cdc._sql_string(sql_type) }})
  {%- else -%}
  try_variant_get({{ v }}, {{ spark_cdc._sql_string('$.' ~ name) }}, {{ spark_cdc._sql_string(sql_type) }})
  {%- endif -%}
{%- endmacro %}

{#- SQL: a map<string, parsed value> as JSON object text, keys in the order Spark 4 writes them. -#}
{% macro _jv_map_json(map_expr) -%}
  {%- if spark_cdc._spark3() -%}
  spark_cdc_json_canonical({{ spark_cdc._cdc_members_object_json(map_expr) }})
  {%- else -%}
  to_json({{ map_expr }})
  {%- endif -%}
{%- endmacro %}
