{#- Found before the package's own macros (dispatch search_order in dbt_project.yml): a benchmark case
    enables only the formats it measures (SPARK_CDC_BENCH_FORMATS, space-separated), so cdc_changes
    unions only the staging tables that case built. Unset, every format of the vars is enabled. -#}
{% macro spark__format_enabled(format) -%}
  {%- set only = env_var('SPARK_CDC_BENCH_FORMATS', '') | trim -%}
  {%- if only and format not in only.split() -%}
    {{ return(false) }}
  {%- endif -%}
  {{ return(spark_cdc.default__format_enabled(format)) }}
{%- endmacro %}
