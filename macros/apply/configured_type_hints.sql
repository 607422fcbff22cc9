{#- SQL: the change's type hints (`hints_expr`, map column -> JSON hint) with the source types a user
    configured for its table (var spark_cdc.tables['<table>'].column_types, and for YDB also
    ydb_column_types), which win over the envelope's: {"type": "<source type>"} per column. Needed
    where the envelope carries no types, e.g. to mark a CockroachDB JSONB column. `source_table_expr`
    is a SQL expression of the change's table, compared with configuration literals only. -#}
{% macro _cdc_with_configured_hints(hints_expr, source_table_expr) -%}
  {%- set tables = [] -%}
  {%- for name, tcfg in spark_cdc.get_config()['tables'].items() if tcfg is mapping -%}
    {%- set types = {} -%}
    {%- do types.update(tcfg.get('ydb_column_types') or {}) -%}
    {%- do types.update(tcfg.get('column_types') or {}) -%}
    {%- if types -%}{%- do tables.append((name, types)) -%}{%- endif -%}
  {%- endfor -%}
  {%- if not tables -%}
    {{ hints_expr }}
  {%- else -%}
  {%- set s = spark_cdc._sql_string -%}
  (case
    {%- for name, types in tables %}
    when {{ source_table_expr }} = {{ s(name) }} then map_concat(
      map_filter(coalesce({{ hints_expr }}, cast(map() as map<string, string>)),
                 (k, v) -> k not in ({% for c in types | sort %}{{ s(c) }}{{ ', ' if not loop.last }}{% endfor %})),
      map({% for c, t in types.items() | sort %}{{ s(c) }}, {{ s(tojson({'type': t | string})) }}{{ ', ' if not loop.last }}{% endfor %}))
    {%- endfor %}
    else {{ hints_expr }}
  end)
  {%- endif -%}
{%- endmacro %}
