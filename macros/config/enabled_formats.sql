{#- Names of the formats enabled in var('spark_cdc').formats, in a stable order. -#}
{% macro enabled_formats() -%}
  {{ return(adapter.dispatch('enabled_formats', 'spark_cdc')()) }}
{%- endmacro %}

{% macro default__enabled_formats() -%}
  {%- set names = [] -%}
  {%- for format in spark_cdc.get_config()['formats'] | sort if spark_cdc.format_enabled(format) -%}
    {%- do names.append(format) -%}
  {%- endfor -%}
  {{ return(names) }}
{%- endmacro %}
