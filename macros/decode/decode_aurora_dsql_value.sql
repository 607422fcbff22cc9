{#- SQL expression: an Aurora DSQL image value as `data_type`. DSQL records carry no per-column type
    information, so the target column's declared Spark type decides, following the serialisation
    table of the DSQL CDC record format (docs/formats/aurora_dsql.md, "Value decoding"):
      smallint/integer/bigint/oid   JSON number                      -> integral types by try_cast
      real/double precision         JSON number or "NaN"/"Infinity"/"-Infinity" -> float/double
      numeric/decimal               JSON string ("123.45", "NaN"...) -> decimal (NaN/Infinity -> null),
                                                                        double (NaN/Infinity kept), string (exact)
      boolean                       JSON boolean                     -> boolean
      text/varchar/bpchar/name/uuid JSON string                      -> string
      bytea                         base64 JSON string               -> binary (string keeps the base64 text)
      json                          JSON string with the JSON text   -> string (the JSON text)
      date                          days since 1970-01-01            -> date
      time/timetz                   microseconds since midnight (UTC) -> bigint (Spark has no TIME type)
      timestamp/timestamptz         microseconds since the epoch     -> timestamp_ntz / timestamp
      interval                      approximate total microseconds   -> interval day to second / bigint
      oidvector                     JSON array                       -> array<...> (from_json)
    The ±infinity sentinels of date and timestamp(tz) (and every value outside Spark's date and
    timestamp range) become null: Spark has no infinite dates. Nothing here raises: a value that does
    not fit its column becomes null. `type_hint_expr` is accepted for the decode_value contract and
    unused (DSQL has no hints). -#}
{% macro decode_aurora_dsql_value(text_expr, data_type, type_hint_expr) -%}
  {{ return(adapter.dispatch('decode_aurora_dsql_value', 'spark_cdc')(text_expr, data_type, type_hint_expr)) }}
{%- endmacro %}

{% macro default__decode_aurora_dsql_value(text_expr, data_type, type_hint_expr) -%}
  {%- set t = data_type | lower | trim -%}
  {%- set n = 'try_cast(' ~ text_expr ~ ' as bigint)' -%}
  {%- if t == 'date' -%}
    case when {{ n }} between -719162 and 2932896 then date_from_unix_date(cast({{ n }} as int)) end
  {%- elif t == 'timestamp_ntz' -%}
    {{ spark_cdc._micros_to_ntz(n) }}
  {%- elif t.startswith('timestamp') -%}
    {{ spark_cdc._epoch_us_to_timestamp(n) }}
  {%- elif t.startswith('interval') and 'year' not in t and 'month' not in t -%}
    {#- Any bigint of microseconds fits Spark's day-time interval exactly; built from whole days
        plus the remaining seconds so the intermediate decimal never overflows. -#}
    case when {{ n }} is not null then cast(make_dt_interval(
      cast(div({{ n }}, 86400000000) as int), 0, 0,
      cast({{ n }} % 86400000000 as decimal(18, 0)) / 1000000) as {{ data_type }}) end
  {%- elif t.startswith('array') or t.startswith('map') or t.startswith('struct') -%}
    from_json({{ text_expr }}, {{ spark_cdc._sql_string(data_type) }})
  {%- else -%}
    {#- Strings as they are, binary from base64, numbers and booleans by try_cast (which reads
        'NaN', 'Infinity' and '-Infinity' for float and double). -#}
    {{ spark_cdc.decode_generic_value(text_expr, data_type) }}
  {%- endif -%}
{%- endmacro %}
