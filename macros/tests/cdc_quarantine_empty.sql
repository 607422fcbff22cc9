{#- The quarantine holds no records. Fails with one row per (cdc_format, reason_code): how many
    records and one example. Severity comes from var('spark_cdc').contracts.quarantine_severity
    (warn by default; error for strict projects); a severity in the test's yml config wins. -#}
{% test cdc_quarantine_empty(model) %}
  {{ config(severity=spark_cdc._cdc_quarantine_severity(model)) }}
  {{ return(adapter.dispatch('test_cdc_quarantine_empty', 'spark_cdc')(model)) }}
{% endtest %}

{% macro default__test_cdc_quarantine_empty(model) -%}
select
  cdc_format,
  reason_code,
  count(*) as records,
  min_by(named_struct(
    'source_table', source_table,
    'reason_detail', substr(reason_detail, 1, 200),
    'raw_excerpt', substr(raw_value, 1, 120),
    'raw_ref', raw_ref), struct(raw_ref.partition, raw_ref.order)) as example
from {{ model }}
group by cdc_format, reason_code
{%- endmacro %}

{#- var('spark_cdc').contracts.quarantine_severity, checked: 'warn' or 'error'. -#}
{% macro _cdc_quarantine_severity(model) -%}
  {%- set value = spark_cdc.get_config()['contracts']['quarantine_severity'] -%}
  {%- if value is string and value | trim | lower in ('warn', 'error') -%}
    {{ return(value | trim | lower) }}
  {%- endif -%}
  {% set msg %}
spark_cdc: test cdc_quarantine_empty on {{ model }}: var('spark_cdc').contracts.quarantine_severity must be 'warn' or 'error'; got '{{ value }}'.
Fix: set contracts.quarantine_severity to warn (report quarantined records) or error (fail the build) in var('spark_cdc').
  {% endset %}
  {{ exceptions.raise_compiler_error(msg | trim) }}
{%- endmacro %}
