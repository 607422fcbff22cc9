{#- SQL expression: a YDB changefeed JSON value (text as from_json(..., 'map<string,string>') gives it)
    converted to the declared Spark type `data_type`; never raises, unrepresentable values become
    null. `type_hint_expr` is a SQL expression of the column's type hint ({"type": "<YDB type>"},
    from var spark_cdc.tables[...].ydb_column_types) or the literal null. See docs/formats/ydb.md. -#}
{% macro decode_ydb_value(text_expr, data_type, type_hint_expr='null') -%}
  {{ return(adapter.dispatch('decode_ydb_value', 'spark_cdc')(text_expr, data_type, type_hint_expr)) }}
{%- endmacro %}

{% macro default__decode_ydb_value(text_expr, data_type, type_hint_expr='null') -%}
  {%- set t = data_type | lower | trim -%}
  {%- set v = '(' ~ text_expr ~ ')' -%}
  {%- set ydb_type = "lower(get_json_object(" ~ (type_hint_expr if type_hint_expr is not none else 'null') ~ ", '$.type'))" -%}
  {%- set is_integer = v ~ " rlike '^-?[0-9]{1,19}$'" -%}
  {%- if t in ('string', 'varchar', 'text') or t.startswith('varchar') or t.startswith('char') -%}
    {#- YDB String (bytes) arrives base64-encoded: decoded to text only when the hint says String. -#}
    case when {{ ydb_type }} = 'string' then cast(try_to_binary({{ v }}, 'base64') as string) else {{ v }} end
  {%- elif t == 'binary' -%}
    {#- String: base64; PostgreSQL bytea: '\x' + hex; Utf8/Json hinted columns: their UTF-8 bytes. -#}
    case
      when {{ ydb_type }} in ('utf8', 'json', 'jsondocument', 'uuid') then cast({{ v }} as binary)
      when startswith({{ v }}, '\\x') then try_to_binary(substr({{ v }}, 3), 'hex')
      else try_to_binary({{ v }}, 'base64')
    end
  {%- elif t == 'date' -%}
    {#- Date/Datetime/Timestamp: ISO-8601 text; Date32: days since the epoch. -#}
    case
      when {{ is_integer }} then
        case when try_cast({{ v }} as bigint) between -719162 and 2932896
             then date_from_unix_date(try_cast({{ v }} as int)) end
      else try_cast({{ v }} as date)
    end
  {%- elif t in ('timestamp', 'timestamp_ltz', 'timestamp_ntz') -%}
    {#- Date/Datetime/Timestamp: ISO-8601 text with Z; Datetime64: epoch seconds; Timestamp64
        (and any other integer without a hint): epoch microseconds. -#}
    {%- set instant -%}
    case
      when {{ is_integer }} then
        case when {{ ydb_type }} in ('datetime64', 'datetime')
             then case when try_cast({{ v }} as bigint) between -62135596800 and 253402300799
                       then timestamp_seconds(try_cast({{ v }} as bigint)) end
             else {{ spark_cdc._epoch_us_to_timestamp(v) }} end
      else try_cast({{ v }} as timestamp)
    end
    {%- endset -%}
    {%- if t == 'timestamp_ntz' -%}
      convert_timezone(current_timezone(), 'UTC', cast({{ instant }} as timestamp_ntz))
    {%- else -%}
      {{ instant }}
    {%- endif -%}
  {%- elif t.startswith('interval') and 'year' not in t and 'month' not in t -%}
    {#- Interval/Interval64 (microseconds) as a day-time interval. -#}
    case when {{ is_integer }} then try_multiply(interval '0.000001' second, try_cast({{ v }} as bigint)) end
  {%- else -%}
    {#- Numbers, Bool, Decimal (as text), DyNumber ('.3321e1'), Double/Float 'nan'/'inf'/'-inf',
        Pg numeric types (as text): Spark's own conversion, null when it does not fit. -#}
    try_cast({{ v }} as {{ data_type }})
  {%- endif -%}
{%- endmacro %}
