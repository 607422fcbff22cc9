{#- Completeness of the change stream: every raw record of each format's raw relation became a
    change, a duplicate delivery of one, a skipped record, a quarantined record, or is a DSQL chunk
    still pending or consumed by a reassembled record (see cdc_record_outcomes_sql). Fails with the
    raw records that are unaccounted for. Attached to cdc_accounting, the ledger it explains. -#}
{% test cdc_records_accounted(model, allow_unstaged=none, formats=none) %}
  {{ return(adapter.dispatch('test_cdc_records_accounted', 'spark_cdc')(model, allow_unstaged, formats)) }}
{% endtest %}

{% macro default__test_cdc_records_accounted(model, allow_unstaged=none, formats=none) -%}
  {%- set allow = spark_cdc._cdc_flag(
        spark_cdc.get_config()['contracts']['completeness_allow_unstaged'] if allow_unstaged is none else allow_unstaged,
        'cdc_records_accounted', model, 'allow_unstaged') -%}
  {%- set names = spark_cdc._cdc_test_formats(formats, 'cdc_records_accounted', model) -%}
select cdc_format, raw_relation, raw_partition, raw_order, raw_excerpt, lost_at
from (
  {%- for format in names %}
  {{ spark_cdc.cdc_record_outcomes_sql(format) }}
  {%- if not loop.last %}
  union all
  {%- endif %}
  {%- endfor %}
  {%- if not names %}
  select cast(null as string) as cdc_format, cast(null as string) as raw_relation, cast(null as string) as raw_partition,
         cast(null as decimal(38,0)) as raw_order, cast(null as string) as raw_excerpt, cast(null as string) as outcome,
         cast(null as string) as reason_code, cast(null as string) as lost_at
  where false
  {%- endif %}
) as records
where outcome = 'unaccounted'{% if not allow %} or outcome = 'unstaged'{% endif %}
{%- endmacro %}
