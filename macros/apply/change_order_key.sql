{#- SQL expression: a null-free, totally ordered struct from a canonical `seq` struct, so that struct
    comparison and max()/max_by() order changes exactly as the source committed them. -#}
{% macro change_order_key(seq_expr) -%}
  {{ return(adapter.dispatch('change_order_key', 'spark_cdc')(seq_expr)) }}
{%- endmacro %}

{% macro default__change_order_key(seq_expr) -%}
  named_struct(
    's1', coalesce({{ seq_expr }}.s1, cast(-1 as decimal(38,0))),
    's2', coalesce({{ seq_expr }}.s2, cast(-1 as decimal(38,0))),
    's3', coalesce({{ seq_expr }}.s3, cast(-1 as decimal(38,0))))
{%- endmacro %}
