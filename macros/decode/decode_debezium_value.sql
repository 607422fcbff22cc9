{#- SQL expression: a Debezium image value as `data_type`, guided by the column's Kafka Connect
    schema (the type hint {"type", "name", "parameters"} that staging took from the inline `schema`
    block). Handles the PostgreSQL connector's logical types:
      io.debezium.time.Date, org.apache.kafka.connect.data.Date         int32 days since epoch
      io.debezium.time.Timestamp / MicroTimestamp / NanoTimestamp,
      org.apache.kafka.connect.data.Timestamp                            int64 ms / us / ns since epoch (no zone)
      io.debezium.time.ZonedTimestamp                                    ISO-8601 text with offset
      io.debezium.time.Time / MicroTime / NanoTime,
      org.apache.kafka.connect.data.Time                                 ms / us / ns since midnight
      io.debezium.time.MicroDuration                                     int64 microseconds
      org.apache.kafka.connect.data.Decimal                              base64 big-endian unscaled, `scale` parameter
      io.debezium.data.VariableScaleDecimal                              {"scale": s, "value": base64}
      io.debezium.data.Json, Uuid, Enum, Xml, ZonedTime ...              text, kept as it is
      bytes (no logical name)                                            base64
    Which branches are generated depends on the target type; without a hint the generic decoder
    applies. Everything is Spark SQL: a Python UDF in a CASE branch would be evaluated for every row
    of the batch, branch taken or not (Spark extracts Python UDFs into an operator of their own). -#}
{% macro decode_debezium_value(text_expr, data_type, type_hint_expr) -%}
  {{ return(adapter.dispatch('decode_debezium_value', 'spark_cdc')(text_expr, data_type, type_hint_expr)) }}
{%- endmacro %}

{% macro default__decode_debezium_value(text_expr, data_type, type_hint_expr) -%}
  {%- set t = data_type | lower | trim -%}
  {%- set is_text = t in ('string', 'text') or t.startswith('varchar') or t.startswith('char') -%}
  {%- set name = "get_json_object(" ~ type_hint_expr ~ ", '$.name')" -%}
  {%- set connect_type = "get_json_object(" ~ type_hint_expr ~ ", '$.type')" -%}
  {%- set n = "try_cast(" ~ text_expr ~ " as bigint)" -%}
  {%- set generic = spark_cdc.decode_generic_value(text_expr, data_type) -%}
  {#- Connect Decimal: base64 in the value, scale in the schema; VariableScaleDecimal: both in the
      value. One decoder call serves both (it is a large expression: one copy per column). -#}
  {%- set variable_scale = name ~ " = 'io.debezium.data.VariableScaleDecimal'" -%}
  {%- set decimal_names = "'org.apache.kafka.connect.data.Decimal', 'io.debezium.data.VariableScaleDecimal'" -%}
  {%- set decimal_text = spark_cdc._connect_decimal_text(
        "case when " ~ variable_scale ~ " then get_json_object(" ~ text_expr ~ ", '$.value') else " ~ text_expr ~ " end",
        "try_cast(case when " ~ variable_scale ~ " then get_json_object(" ~ text_expr ~ ", '$.scale')"
          ~ " else get_json_object(" ~ type_hint_expr ~ ", '$.parameters.scale') end as int)") -%}
  {%- set names = {
      'date': "'io.debezium.time.Date', 'org.apache.kafka.connect.data.Date'",
      'ts_ms': "'io.debezium.time.Timestamp', 'org.apache.kafka.connect.data.Timestamp'",
      'ts_us': "'io.debezium.time.MicroTimestamp'",
      'ts_ns': "'io.debezium.time.NanoTimestamp'",
      'time_ms': "'io.debezium.time.Time', 'org.apache.kafka.connect.data.Time'",
      'time_us': "'io.debezium.time.MicroTime'",
      'time_ns': "'io.debezium.time.NanoTime'",
  } -%}
  {#- Microseconds (since epoch or midnight) of each integer encoding. -#}
  {%- set micros = {
      'ts_ms': 'try_multiply(' ~ n ~ ', 1000)', 'ts_us': n, 'ts_ns': 'div(' ~ n ~ ', 1000)',
      'time_ms': 'try_multiply(' ~ n ~ ', 1000)', 'time_us': n, 'time_ns': 'div(' ~ n ~ ', 1000)',
  } -%}
  {%- set branches -%}
  {%- if t == 'date' %}
    when {{ name }} in ({{ names['date'] }}) then
      case when {{ n }} between -719162 and 2932896 then date_from_unix_date(cast({{ n }} as int)) end
    {%- for enc in ('ts_ms', 'ts_us', 'ts_ns') %}
    when {{ name }} in ({{ names[enc] }}) then cast({{ spark_cdc._micros_to_ntz(micros[enc]) }} as date)
    {%- endfor %}
  {%- elif t.startswith('timestamp') %}
    {%- for enc in ('ts_ms', 'ts_us', 'ts_ns') %}
    when {{ name }} in ({{ names[enc] }}) then
      {%- if t == 'timestamp_ntz' %}
      {#- A zone-less datetime: computed without the session time zone. #}
      {{ spark_cdc._micros_to_ntz(micros[enc]) }}
      {%- else %}
      {{ spark_cdc._epoch_us_to_timestamp(micros[enc]) }}
      {%- endif %}
    {%- endfor %}
    when {{ name }} in ({{ names['date'] }}) then
      case when {{ n }} between -719162 and 2932896 then cast(date_from_unix_date(cast({{ n }} as int)) as {{ data_type }}) end
    when {{ name }} = 'io.debezium.time.ZonedTimestamp' then try_cast({{ text_expr }} as {{ data_type }})
  {%- elif is_text %}
    {%- for enc in ('time_ms', 'time_us', 'time_ns') %}
    when {{ name }} in ({{ names[enc] }}) then {{ spark_cdc._micros_to_time_text(micros[enc]) }}
    {%- endfor %}
    when {{ name }} in ({{ decimal_names }}) then {{ decimal_text }}
  {%- elif t in ('bigint', 'long') %}
    {%- for enc in ('time_ms', 'time_us', 'time_ns') %}
    when {{ name }} in ({{ names[enc] }}) then {{ micros[enc] }}
    {%- endfor %}
  {%- elif t.startswith('decimal') or t.startswith('numeric') or t in ('double', 'float', 'real') %}
    when {{ name }} in ({{ decimal_names }}) then try_cast({{ decimal_text }} as {{ data_type }})
  {%- elif t == 'binary' %}
    when {{ connect_type }} = 'bytes' and {{ name }} is null then try_to_binary({{ text_expr }}, 'base64')
    when {{ connect_type }} is not null then try_cast({{ text_expr }} as binary)
  {%- endif %}
  {%- endset -%}
  {%- if branches | trim -%}
  case {{ branches }}
    else {{ generic }}
  end
  {%- else -%}
  {{ generic }}
  {%- endif -%}
{%- endmacro %}

{#- Microseconds since the epoch as a zone-less timestamp_ntz (null outside Spark's range),
    computed without the session time zone: whole days plus the remaining seconds as an exact
    day-time interval (timestampadd(MICROSECOND, ...) would truncate a bigint to int on Spark 3.5). -#}
{% macro _micros_to_ntz(micros_expr) -%}
  case when {{ micros_expr }} between -62135596800000000 and 253402300799999999
       then timestamp_ntz'1970-01-01 00:00:00'
            + make_dt_interval(cast(div({{ micros_expr }}, 86400000000) as int), 0, 0,
                               cast({{ micros_expr }} % 86400000000 as decimal(18,0)) / 1000000) end
{%- endmacro %}

{#- Microseconds since midnight as 'HH:mm:ss.ffffff' (null outside one day), independent of the
    session time zone. -#}
{% macro _micros_to_time_text(micros_expr) -%}
  case when {{ micros_expr }} between 0 and 86400000000
       then format_string('%02d:%02d:%02d.%06d',
                          div({{ micros_expr }}, 3600000000), div({{ micros_expr }}, 60000000) % 60,
                          div({{ micros_expr }}, 1000000) % 60, {{ micros_expr }} % 1000000) end
{%- endmacro %}

{#- A Kafka Connect Decimal (base64 of the big-endian two's-complement unscaled integer) and its
    scale as exact decimal text, or null: invalid base64 (the standard alphabet, padded), empty,
    over 64 characters, over 38 digits, or a scale outside 0..38. The same result as the UDF
    spark_cdc_decode_connect_decimal (dbt_spark_cdc.decoders.decode_connect_decimal, its reference),
    computed in the JVM. A negative number's magnitude is its bytes inverted (hex digits translated)
    plus 1. Leading zero digits stripped, a magnitude of 38 decimal digits has at most 32 hex digits
    (10^38 < 2^128): the high and low 16 (conv reads them as unsigned 64-bit integers) combine
    exactly in decimal(38,0) (scale 0, so Spark never rounds; try_ arithmetic gives null past 38
    digits). A longer magnitude is over 38 digits. This replaced a base-10^9 limb fold that was
    exact too but about 8 KB of SQL per column, a third of an apply statement's planning time. -#}
{% macro _connect_decimal_text(b64_expr, scale_expr) -%}
  {#- The inputs, the bytes' hex and the magnitude's hex are bound once (lambda variables), not
      expanded where used. -#}
  {%- set neg = "substr(_cdc_hex, 1, 1) >= '8'" -%}
  {%- set high = "substr(_cdc_mag, 1, length(_cdc_mag) - 16)" -%}
  {%- set low = "right(_cdc_mag, 16)" -%}
  transform(array(named_struct('b64', {{ b64_expr }}, 'scale', {{ scale_expr }})), _cdc_dec ->
    case when length(_cdc_dec.b64) between 4 and 64
          {#- Python's strict base64: padding completes the last quad exactly, or follows whole quads
              in any number; \\z, since $ also matches before a final line break. #}
          and _cdc_dec.b64 rlike '^(?:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)|(?:[A-Za-z0-9+/]{4})+=*)\\z'
          and _cdc_dec.scale between 0 and 38
    {#- Padding stripped: Java's decoder refuses padding after whole quads, which Python accepts. #}
    then transform(array(hex(unbase64(regexp_replace(_cdc_dec.b64, '=+$', '')))), _cdc_hex -> transform(
      array(regexp_replace(case when {{ neg }} then translate(_cdc_hex, '0123456789ABCDEF', 'FEDCBA9876543210')
                                else _cdc_hex end, '^0+', '')),
      _cdc_mag -> case when length(_cdc_mag) <= 32 then transform(
        array(cast(try_add(try_add(
          try_multiply(cast(coalesce(conv(nullif({{ high }}, ''), 16, 10), '0') as decimal(20,0)), 18446744073709551616BD),
          cast(coalesce(conv(nullif({{ low }}, ''), 16, 10), '0') as decimal(20,0))),
          case when {{ neg }} then 1 else 0 end) as string)),
        digits -> {{ spark_cdc._digits_decimal_text('digits', neg, '_cdc_dec.scale') }})[0] end
    )[0])[0] end)[0]
{%- endmacro %}

{#- A magnitude's decimal digits ('' for zero), its sign and `scale` digits after the point, as
    text ('-0.05' for 5, negative, scale 2). The digits, zero-padded to at least one before the
    point, are bound once (a lambda variable), not expanded where used. -#}
{% macro _digits_decimal_text(digits_expr, negative_expr, scale_expr) -%}
  transform(array(lpad({{ digits_expr }}, greatest(length({{ digits_expr }}), {{ scale_expr }} + 1), '0')), _cdc_pad ->
    concat(case when {{ negative_expr }} then '-' else '' end,
           case when {{ scale_expr }} = 0 then _cdc_pad
                else concat(left(_cdc_pad, length(_cdc_pad) - {{ scale_expr }}), '.', right(_cdc_pad, {{ scale_expr }})) end))[0]
{%- endmacro %}
