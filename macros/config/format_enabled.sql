{% macro format_enabled(format) -%}
  {{ return(adapter.dispatch('format_enabled', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__format_enabled(format) -%}
  {{ return(spark_cdc.format_config(format).get('enabled', false) | as_bool) }}
{%- endmacro %}
