{#- SQL: JSON message text `value` parsed with `schema` (a struct type whose last field is
    `_corrupt: string`, which receives the text when it is not JSON), null over max_payload_bytes
    (such a value is never read). -#}
{% macro _bounded_from_json(value, schema) -%}
      from_json(
        case when {{ spark_cdc._payload_within_limit(value) }} then {{ value }} end,
        {{ spark_cdc._sql_string(schema) }},
        map('columnNameOfCorruptRecord', '_corrupt')
      )
{%- endmacro %}

{#- SQL: the WHEN clauses of a CASE that every parser reading its message with from_json (and a
    `_corrupt` column, columnNameOfCorruptRecord) starts its classification with, on row `alias`
    (columns raw_value and j): an empty value (reason `empty_code`: malformed_json, or tombstone where
    the format sends empty values on purpose), a value over max_payload_bytes, a value that is not
    JSON, and an envelope field of the wrong JSON type. `detailed`: each WHEN yields
    named_struct('code', ..., 'detail', ...) instead of the reason code alone. -#}
{% macro _common_early_reason(alias, empty_code, detailed=false) -%}
  {%- set value = alias ~ '.raw_value' -%}
  when {{ spark_cdc._raw_value_is_empty(value) }} then {{ spark_cdc._early_reason_value(empty_code, "'empty value'", detailed) }}
  when {{ spark_cdc._payload_too_large(value) }}
    then {{ spark_cdc._early_reason_value('payload_too_large', spark_cdc._payload_too_large_detail(value), detailed) }}
  when {{ alias }}.j is null then {{ spark_cdc._early_reason_value('malformed_json', 'cast(null as string)', detailed) }}
  {{ spark_cdc._corrupt_envelope_reason(alias, detailed) }}
{%- endmacro %}

{#- SQL: the two WHEN clauses of a from_json parser for a message with a `_corrupt` record (row
    `alias`, columns raw_value and j): not a JSON object at all (malformed_json), else an envelope
    field of the wrong JSON type (invalid_envelope). `detailed` as in _common_early_reason. -#}
{% macro _corrupt_envelope_reason(alias, detailed=false) -%}
  when {{ alias }}.j._corrupt is not null and from_json({{ alias }}.raw_value, 'map<string, string>') is null
    then {{ spark_cdc._early_reason_value('malformed_json', 'cast(null as string)', detailed) }}
  when {{ alias }}.j._corrupt is not null then {{ spark_cdc._early_reason_value('invalid_envelope', "'an envelope field has the wrong JSON type'", detailed) }}
{%- endmacro %}

{#- SQL boolean: the landed value `value_expr` is absent or blank (a tombstone, or an empty message). -#}
{% macro _raw_value_is_empty(value_expr) -%}
  {{ value_expr }} is null or trim({{ value_expr }}) = ''
{%- endmacro %}

{#- SQL: the result of one early-reason WHEN, the reason code `code` alone or, `detailed`,
    named_struct('code', code, 'detail', `detail_sql`). -#}
{% macro _early_reason_value(code, detail_sql, detailed) -%}
  {%- if detailed -%}
  named_struct('code', {{ spark_cdc._sql_string(code) }}, 'detail', {{ detail_sql }})
  {%- else -%}
  {{ spark_cdc._sql_string(code) }}
  {%- endif -%}
{%- endmacro %}
