{#- Per source-table options (var spark_cdc.tables["schema.table"]), e.g. primary_key. -#}
{% macro table_config(source_table) -%}
  {{ return(adapter.dispatch('table_config', 'spark_cdc')(source_table)) }}
{%- endmacro %}

{% macro default__table_config(source_table) -%}
  {{ return(spark_cdc.get_config()['tables'].get(source_table, {})) }}
{%- endmacro %}
