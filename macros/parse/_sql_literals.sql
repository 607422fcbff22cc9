{#- A Spark SQL string literal for a configuration value (never for message content). -#}
{% macro _sql_string(value) -%}
  {%- if value is none -%}cast(null as string){%- else -%}
  '{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
  {%- endif -%}
{%- endmacro %}

{#- Epoch milliseconds / microseconds (as text or number) to timestamp; null when absent or out of
    Spark's timestamp range, so a hostile value cannot raise DATETIME_OVERFLOW mid-batch. -#}
{% macro _epoch_ms_to_timestamp(expr) -%}
  case when try_cast({{ expr }} as bigint) between -62135596800000 and 253402300799999
       then timestamp_millis(try_cast({{ expr }} as bigint)) end
{%- endmacro %}

{#- SQL: epoch microseconds as a timestamp, or null outside the years 1-9999 (never raises). -#}
{% macro _epoch_us_to_timestamp(expr) -%}
  case when try_cast({{ expr }} as bigint) between -62135596800000000 and 253402300799999999
       then timestamp_micros(try_cast({{ expr }} as bigint)) end
{%- endmacro %}
