{#- Every staged record has a status the model can produce and, unless it is a change, a reason
    code of the seed cdc_reason_codes whose record_status is that status (a change has none). One
    scan of the model and one join with the seed, where not_null + accepted_values + relationships
    took three scans. With `format`, every record also names that format in cdc_format: the
    canonical stream (union_staged) selects the format as a literal, so a staging model writing
    another value would go unnoticed there. Fails with one row per (record_status, reason_code,
    violation): how many records and one raw excerpt. -#}
{% test cdc_reason_codes_valid(model, statuses=none, format=none) %}
  {{ return(adapter.dispatch('test_cdc_reason_codes_valid', 'spark_cdc')(model, statuses, format)) }}
{% endtest %}

{% macro default__test_cdc_reason_codes_valid(model, statuses=none, format=none) -%}
  {%- set literals = [] -%}
  {%- for status in statuses or ['change', 'quarantined', 'skipped'] -%}{%- do literals.append(spark_cdc._sql_string(status)) -%}{%- endfor -%}
with checked as (
  select
    m.record_status,
    m.reason_code,
    case
      {%- if format is not none %}
      when not (m.cdc_format <=> {{ spark_cdc._sql_string(format) }}) then 'cdc_format_other'
      {%- endif %}
      when m.record_status is null then 'record_status_null'
      when m.record_status not in ({{ literals | join(', ') }}) then 'record_status_invalid'
      when m.record_status = 'change' and m.reason_code is not null then 'reason_code_on_change'
      when m.record_status != 'change' and m.reason_code is null then 'reason_code_null'
      when m.record_status != 'change' and c.reason_code is null then 'reason_code_unknown'
      when m.record_status != 'change' and c.record_status != m.record_status then 'reason_code_of_other_status'
    end as violation,
    m.raw_value
  from {{ model }} as m
  left join {{ ref('cdc_reason_codes') }} as c
    on c.reason_code = m.reason_code
)
select record_status, reason_code, violation, count(*) as records, min(substr(raw_value, 1, 120)) as raw_excerpt
from checked
where violation is not null
group by record_status, reason_code, violation
{%- endmacro %}
