{% macro format_config(format) -%}
  {{ return(adapter.dispatch('format_config', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__format_config(format) -%}
  {%- set formats = spark_cdc.get_config()['formats'] -%}
  {%- if format not in formats -%}
    {% set msg %}
spark_cdc: unknown CDC format '{{ format }}' in var('spark_cdc').formats.
Known formats: {{ formats.keys() | list | join(', ') }}. Fix the format name in your dbt_project.yml vars.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {{ return(formats[format]) }}
{%- endmacro %}
