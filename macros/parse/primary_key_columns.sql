{#- SQL expression: sorted array of primary-key column names for the row's source table.
    Configured tables (var spark_cdc.tables[...].primary_key) are matched as literals against the
    envelope's table name (message text is compared, never interpolated); other tables fall back to
    the field names of the message key, when the raw table has one. -#}
{% macro primary_key_columns(source_table_expr, message_key_map_expr) -%}
  {{ return(adapter.dispatch('primary_key_columns', 'spark_cdc')(source_table_expr, message_key_map_expr)) }}
{%- endmacro %}

{% macro default__primary_key_columns(source_table_expr, message_key_map_expr) -%}
  {%- set configured = spark_cdc._configured_primary_keys() -%}
  {%- set fallback = 'array_sort(map_keys(' ~ message_key_map_expr ~ '))' -%}
  {#- No configured table: the message key alone (a CASE needs at least one WHEN). -#}
  {%- if not configured -%}
    {{ return(fallback) }}
  {%- endif -%}
  case
  {%- for name, pk in configured %}
    when {{ source_table_expr }} = {{ spark_cdc._sql_string(name) }}
      then array({% for c in pk | unique | sort %}{{ spark_cdc._sql_string(c) }}{{ ', ' if not loop.last }}{% endfor %})
  {%- endfor %}
    else {{ fallback }}
  end
{%- endmacro %}

{#- The configured tables that declare a primary key, as (table name, list of key column names in
    declared order): var spark_cdc.tables[<t>].primary_key, a name or a list. -#}
{% macro _configured_primary_keys() -%}
  {%- set configured = [] -%}
  {%- for name, tcfg in spark_cdc.get_config()['tables'].items() if tcfg.get('primary_key') -%}
    {%- set pk = tcfg['primary_key'] -%}
    {%- do configured.append((name, [pk] if pk is string else pk)) -%}
  {%- endfor -%}
  {{ return(configured) }}
{%- endmacro %}
