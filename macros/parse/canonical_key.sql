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
