{#- SQL expression: values of the primary-key columns `pk_columns_expr` (array<string>) taken from the
    change image, else from the message key. Values are JSON text as Spark reads it (numbers keep
    their spelling, strings lose their quotes). -#}
{% macro key_values(pk_columns_expr, image_map_expr, message_key_map_expr) -%}
  {{ return(adapter.dispatch('key_values', 'spark_cdc')(pk_columns_expr, image_map_expr, message_key_map_expr)) }}
{%- endmacro %}

{% macro default__key_values(pk_columns_expr, image_map_expr, message_key_map_expr) -%}
  transform({{ pk_columns_expr }},
            c -> coalesce(try_element_at({{ image_map_expr }}, c), try_element_at({{ message_key_map_expr }}, c)))
{%- endmacro %}

{#- SQL expression: the canonical key, a JSON object of the primary-key columns with sorted names
    and every value spelled as text (101 and "101" are one key), or null when any part is missing.
    `pk_columns_expr` must already be sorted (spark_cdc.primary_key_columns sorts). -#}
{% macro canonical_key(pk_columns_expr, key_values_expr) -%}
  {{ return(adapter.dispatch('canonical_key', 'spark_cdc')(pk_columns_expr, key_values_expr)) }}
{%- endmacro %}

{% macro default__canonical_key(pk_columns_expr, key_values_expr) -%}
  case
    when {{ pk_columns_expr }} is null or size({{ pk_columns_expr }}) = 0 then null
    when exists({{ key_values_expr }}, v -> v is null) then null
    else to_json(map_from_arrays({{ pk_columns_expr }}, {{ key_values_expr }}))
  end
{%- endmacro %}

{#- SQL boolean: a row image (JSON object text) names a member twice. Spark's readers disagree on
    which value such an image means (a map keeps both and finds the first; a struct keeps the
    last), so staging quarantines it (invalid_envelope) rather than pick one. -#}
{% macro _image_names_a_column_twice(image_text_expr) -%}
  coalesce(size(json_object_keys({{ image_text_expr }})) != size(array_distinct(json_object_keys({{ image_text_expr }}))), false)
{%- endmacro %}

{#- SQL expression: the canonical key of a change's before image when it names another key than
    the change (`key_expr`): a primary-key update, which the canonical stream carries as a delete of
    that key at the change's seq (spark_cdc.union_staged). Null when the image is absent, lacks a
    key column or names the same key. `before_map_expr` is the image as map<string, string>. -#}
{% macro _before_key(pk_columns_expr, before_map_expr, key_expr) -%}
  nullif({{ spark_cdc.canonical_key(pk_columns_expr, 'transform(' ~ pk_columns_expr ~ ', c -> try_element_at(' ~ before_map_expr ~ ', c))') }}, {{ key_expr }})
{%- endmacro %}

{#- Reading key columns out of an image without building a map of every column. The primary-key
    columns of configured tables are known when the model compiles, so an image is parsed with a
    struct of just those columns (Spark's JSON reader skips the other fields), and a key column is a
    field of it; Spark's reader matches field names exactly, as a map lookup does. A column whose name
    equals another's but for case cannot be a struct field (Spark SQL resolves fields without case),
    and neither can the key of a table not configured: those are read from a map of the image, which
    is built only for the tables that need it. One difference from a map: an image that repeats a
    key column's name gives its last value (the one the target's decoding reads), not its first. -#}
{% macro _image_key_plan() -%}
  {%- set configured = spark_cdc._configured_primary_keys() -%}
  {%- set names = [] -%}
  {%- for name, pk in configured -%}
    {%- for c in pk if c not in names -%}{%- do names.append(c) -%}{%- endfor -%}
  {%- endfor -%}
  {%- set lowered = names | map('lower') | list -%}
  {%- set columns = [] -%}
  {%- for c in names if lowered.count(c | lower) == 1 -%}{%- do columns.append(c) -%}{%- endfor -%}
  {%- set struct_tables = [] -%}
  {%- for name, pk in configured -%}
    {%- if (pk | reject('in', columns) | list | length) == 0 -%}
      {%- do struct_tables.append(name) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return({'columns': columns, 'tables': struct_tables}) }}
{%- endmacro %}

{#- SQL: whether the row's table is one whose key columns are all read from the struct. -#}
{% macro _image_key_struct_table(source_table_expr, plan) -%}
  {%- if plan['tables'] -%}
  coalesce({{ source_table_expr }} in ({% for t in plan['tables'] %}{{ spark_cdc._sql_string(t) }}{{ ', ' if not loop.last }}{% endfor %}), false)
  {%- else -%}
  false
  {%- endif -%}
{%- endmacro %}

{#- SQL: the image's key columns as a struct (null for a table not in plan.tables). -#}
{% macro _image_key_fields(image_text_expr, source_table_expr, plan) -%}
  {%- if plan['columns'] -%}
  {%- set ddl -%}
struct<{% for c in plan['columns'] %}`{{ c | replace('`', '``') }}`: string{{ ', ' if not loop.last }}{% endfor %}>
  {%- endset -%}
  case when {{ spark_cdc._image_key_struct_table(source_table_expr, plan) }}
       then from_json({{ image_text_expr }}, {{ spark_cdc._sql_string(ddl) }}) end
  {%- else -%}
  cast(null as struct<unused: string>)
  {%- endif -%}
{%- endmacro %}

{#- SQL: the image as map<string, string>, only for a table not in plan.tables. -#}
{% macro _image_key_map(image_text_expr, source_table_expr, plan) -%}
  case when not {{ spark_cdc._image_key_struct_table(source_table_expr, plan) }}
       then from_json({{ image_text_expr }}, 'map<string, string>') end
{%- endmacro %}

{#- SQL over the lambda variable `column_var`: that key column's value in the image, from the
    struct where it is one of its fields, else from the map (null for a table in plan.tables, whose
    struct has every key column; the struct is null for the other tables). -#}
{% macro _image_key_value(column_var, fields_expr, map_expr, plan) -%}
  {%- if plan['columns'] -%}
  coalesce(
    case {{ column_var }}
      {%- for c in plan['columns'] %}
      when {{ spark_cdc._sql_string(c) }} then {{ fields_expr }}.`{{ c | replace('`', '``') }}`
      {%- endfor %}
    end,
    try_element_at({{ map_expr }}, {{ column_var }}))
  {%- else -%}
  try_element_at({{ map_expr }}, {{ column_var }})
  {%- endif -%}
{%- endmacro %}
