{#- Whether var('spark_cdc').formats.<format>.enabled is on (true, or the string 'true'). -#}
{% macro format_enabled(format) -%}
  {{ return(adapter.dispatch('format_enabled', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__format_enabled(format) -%}
  {%- set value = spark_cdc.format_config(format).get('enabled', false) -%}
  {%- if value is string -%}
    {{ return(value | trim | lower in ('true', 'yes', '1', 'on')) }}
  {%- endif -%}
  {{ return(value is sameas true) }}
{%- endmacro %}
