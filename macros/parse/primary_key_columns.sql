{#- SQL expression: sorted array of primary-key column names for the row's source table.
    Configured tables (var spark_cdc.tables[...].primary_key) are matched as literals against the
    envelope's table name (message text is compared, never interpolated); other tables fall back to
    the field names of the message key, when the raw table has one. -#}
{% macro primary_key_columns(source_table_expr, message_key_map_expr) -%}
  {{ return(adapter.dispatch('primary_key_columns', 'spark_cdc')(source_table_expr, message_key_map_expr)) }}
{%- endmacro %}

{% macro default__primary_key_columns(source_table_expr, message_key_map_expr) -%}
  {%- set tables = spark_cdc.get_config()['tables'] -%}
  case
  {% for name, tcfg in tables.items() if tcfg.get('primary_key') %}
    {%- set pk = tcfg['primary_key'] -%}
    {%- set pk = [pk] if pk is string else pk -%}
    when {{ source_table_expr }} = {{ spark_cdc._sql_string(name) }}
      then array({% for c in pk | unique | sort %}{{ spark_cdc._sql_string(c) }}{{ ', ' if not loop.last }}{% endfor %})
  {%- endfor %}
    else array_sort(map_keys({{ message_key_map_expr }}))
  end
{%- endmacro %}
