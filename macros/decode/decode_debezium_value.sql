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
    Which branches are generated depends on the target type, so (for example) the decimal UDF runs
    only for columns declared decimal or string. Without a hint the generic decoder applies. -#}
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
    when {{ name }} = 'org.apache.kafka.connect.data.Decimal' then
      spark_cdc_decode_connect_decimal({{ text_expr }}, try_cast(get_json_object({{ type_hint_expr }}, '$.parameters.scale') as int))
    when {{ name }} = 'io.debezium.data.VariableScaleDecimal' then
      spark_cdc_decode_connect_decimal(get_json_object({{ text_expr }}, '$.value'), try_cast(get_json_object({{ text_expr }}, '$.scale') as int))
  {%- elif t in ('bigint', 'long') %}
    {%- for enc in ('time_ms', 'time_us', 'time_ns') %}
    when {{ name }} in ({{ names[enc] }}) then {{ micros[enc] }}
    {%- endfor %}
  {%- elif t.startswith('decimal') or t.startswith('numeric') or t in ('double', 'float', 'real') %}
    when {{ name }} = 'org.apache.kafka.connect.data.Decimal' then try_cast(
      spark_cdc_decode_connect_decimal({{ text_expr }}, try_cast(get_json_object({{ type_hint_expr }}, '$.parameters.scale') as int))
      as {{ data_type }})
    when {{ name }} = 'io.debezium.data.VariableScaleDecimal' then try_cast(
      spark_cdc_decode_connect_decimal(get_json_object({{ text_expr }}, '$.value'), try_cast(get_json_object({{ text_expr }}, '$.scale') as int))
      as {{ data_type }})
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
    computed without the session time zone. -#}
{% macro _micros_to_ntz(micros_expr) -%}
  case when {{ micros_expr }} between -62135596800000000 and 253402300799999999
       then timestampadd(MICROSECOND, {{ micros_expr }}, timestamp_ntz'1970-01-01 00:00:00') end
{%- endmacro %}

{#- Microseconds since midnight as 'HH:mm:ss.ffffff' (null outside one day), independent of the
    session time zone. -#}
{% macro _micros_to_time_text(micros_expr) -%}
  case when {{ micros_expr }} between 0 and 86400000000
       then format_string('%02d:%02d:%02d.%06d',
                          div({{ micros_expr }}, 3600000000), div({{ micros_expr }}, 60000000) % 60,
                          div({{ micros_expr }}, 1000000) % 60, {{ micros_expr }} % 1000000) end
{%- endmacro %}
