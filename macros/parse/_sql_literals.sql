{#- A Spark SQL string literal for a value the package writes into SQL text (configuration, and
    the few values read back from tables, such as partition values). Backslashes and quotes are
    escaped, and so is `${`: Spark substitutes `${var}` (and `${env:...}`) inside any SQL text,
    string literals included, before it parses the statement; `$\{` is unescaped to `${` after
    that, so the value is kept as it is. -#}
{% macro _sql_string(value) -%}
  {%- if value is none -%}cast(null as string){%- else -%}
  '{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") | replace("${", "$\\{") }}'
  {%- endif -%}
{%- endmacro %}

{#- An identifier (a column, table or schema name) as Spark SQL text: in backticks, a backtick in the
    name doubled. The one escaping of identifiers in the package (dbt-spark's adapter.quote does not
    double backticks). A name read from change images (columns='*') is safe here too: variable
    substitution is off for the package's statements (check_cdc_targets). -#}
{% macro quote_identifier(identifier) -%}
  {{ return(adapter.dispatch('quote_identifier', 'spark_cdc')(identifier)) }}
{%- endmacro %}

{% macro default__quote_identifier(identifier) -%}
  {{- return('`' ~ (identifier | string | replace('`', '``')) ~ '`') -}}
{%- endmacro %}

{#- SQL boolean: `text_expr` spells an integer of the range [`low`, `high`] (an ordering value's type:
    unsigned 64-bit for a PostgreSQL LSN, signed 64-bit for CockroachDB's HLC wall time), digits only
    (a leading minus where `low` is negative), no fraction, no exponent. Null text is not valid:
    callers test presence first. -#}
{% macro _integer_in_range(text_expr, low, high) -%}
  coalesce(trim({{ text_expr }}) rlike '^-?[0-9]{1,39}$'
           and cast(trim({{ text_expr }}) as decimal(38,0)) between {{ low }} and {{ high }}, false)
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
