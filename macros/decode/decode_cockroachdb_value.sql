{#- SQL expression: a CockroachDB changefeed image value as `data_type`. `text_expr` is the value as
    staging keeps it (exact JSON scalar text, strings unquoted, nested JSON as text). CockroachDB's
    JSON encoder writes INT and FLOAT as numbers (NaN/Infinity as strings), DECIMAL as a number (older
    versions: a string), DATE/TIME/TIMESTAMP/TIMESTAMPTZ/INTERVAL/UUID/INET/ENUM as strings, BYTES as
    a string ("\x" + hex, or base64), JSONB and ARRAY as JSON. Never raises: a value that does not
    fit the type becomes null. `type_hint_expr` (the enriched envelope's schema field) is not needed:
    every type is recognisable from its text. -#}
{% macro decode_cockroachdb_value(text_expr, data_type, type_hint_expr) -%}
  {{ return(adapter.dispatch('decode_cockroachdb_value', 'spark_cdc')(text_expr, data_type, type_hint_expr)) }}
{%- endmacro %}

{% macro default__decode_cockroachdb_value(text_expr, data_type, type_hint_expr) -%}
  {%- set t = data_type | lower | trim -%}
  {%- set x = text_expr -%}
  {#- encode_json_value_null_as_object writes a JSONB null as this object. -#}
  {%- set json_null = "'{\"__crdb_json_null__\":true}'" -%}
  {%- if t in ('string', 'text') or t.startswith('varchar') or t.startswith('char') -%}
    case when {{ x }} = {{ json_null }} then 'null' else {{ x }} end
  {%- elif t == 'binary' -%}
    case when startswith({{ x }}, '\\x') then try_to_binary(substr({{ x }}, 3), 'hex')
         else try_to_binary({{ x }}, 'base64') end
  {%- elif t == 'variant' -%}
    case when {{ x }} = {{ json_null }} then parse_json('null')
         else coalesce(try_parse_json({{ x }}), cast({{ x }} as variant)) end
  {%- elif t.startswith('array') or t.startswith('map') or t.startswith('struct') -%}
    from_json({{ x }}, {{ spark_cdc._sql_string(data_type) }})
  {%- elif t.startswith('interval') and ' month' not in t and ' year' not in t and t != 'interval' -%}
    {{ spark_cdc._cockroachdb_interval_day_time(x, data_type) }}
  {%- else -%}
    {{ spark_cdc.decode_generic_value(x, data_type) }}
  {%- endif -%}
{%- endmacro %}

{#- An INTERVAL in CockroachDB's default (postgres) style, `[N day[s]] [-]HH:MM:SS[.ffffff]`, as a
    day-time interval; null for year/month parts or any other spelling. -#}
{% macro _cockroachdb_interval_day_time(x, data_type) -%}
  {%- set re = "'^(?:(-?[0-9]{1,6}) days? ?)?(?:(-?)([0-9]{1,6}):([0-9]{2}):([0-9]{2}(?:[.][0-9]{1,6})?))?$'" -%}
  case when {{ x }} rlike {{ re }} and {{ x }} != '' then
    cast(make_dt_interval(
      coalesce(try_cast(nullif(regexp_extract({{ x }}, {{ re }}, 1), '') as int), 0), 0, 0,
      try_cast(
        case when regexp_extract({{ x }}, {{ re }}, 2) = '-' then -1 else 1 end
        * (coalesce(try_cast(nullif(regexp_extract({{ x }}, {{ re }}, 3), '') as decimal(18,6)), 0) * 3600
           + coalesce(try_cast(nullif(regexp_extract({{ x }}, {{ re }}, 4), '') as decimal(18,6)), 0) * 60
           + coalesce(try_cast(nullif(regexp_extract({{ x }}, {{ re }}, 5), '') as decimal(18,6)), 0))
        as decimal(18,6))) as {{ data_type }})
  end
{%- endmacro %}
