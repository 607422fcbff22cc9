{#- Every version of an SCD2 target has a valid range: a closed version (valid_to_seq set) starts
    strictly before it ends by sequence (valid_from_seq < valid_to_seq) and not after it ends by
    commit time (valid_from <= valid_to: two changes of one transaction share a commit time), and is
    not current; an open version (valid_to_seq null) is current and its valid_to is valid_to_current
    (null by default). A commit time may be null: streams that carry none (YDB without virtual
    timestamps, CockroachDB without `updated`) are ordered by sequence alone, so such a version is
    checked by sequence only. Failing rows: the key values, the problem and the version's validity. -#}
{% test scd2_valid_range(model, unique_key=none, meta_column_names=none, valid_to_current=none) %}
  {{ return(adapter.dispatch('test_scd2_valid_range', 'spark_cdc')(model, unique_key, meta_column_names, valid_to_current)) }}
{% endtest %}

{% macro default__test_scd2_valid_range(model, unique_key=none, meta_column_names=none, valid_to_current=none) %}
  {%- set s = spark_cdc._cdc_target_contract_settings('scd2_valid_range', model, 'cdc_scd2',
                {'unique_key': unique_key, 'meta_column_names': meta_column_names, 'valid_to_current': valid_to_current}) -%}
  {%- set m = s['meta'] -%}
  {%- set end_of_time = ('cast(' ~ s['valid_to_current'] ~ ' as timestamp)') if s['valid_to_current'] else 'cast(null as timestamp)' %}
with _cdc_contract_checked as (
  select
    {{ spark_cdc._cdc_target_contract_keys(s) }},
    case
      when {{ spark_cdc.quote_identifier(m['valid_from_seq']) }} is null then 'no_valid_from_seq'
      when {{ spark_cdc.quote_identifier(m['valid_to_seq']) }} is null and not coalesce({{ spark_cdc.quote_identifier(m['is_current']) }}, false) then 'open_but_not_current'
      when {{ spark_cdc.quote_identifier(m['valid_to_seq']) }} is null and not ({{ spark_cdc.quote_identifier(m['valid_to']) }} <=> {{ end_of_time }}) then 'current_valid_to_not_valid_to_current'
      when {{ spark_cdc.quote_identifier(m['valid_to_seq']) }} is null then null
      when coalesce({{ spark_cdc.quote_identifier(m['is_current']) }}, true) then 'closed_but_current'
      when {{ spark_cdc.change_order_key(spark_cdc.quote_identifier(m['valid_from_seq'])) }} >= {{ spark_cdc.change_order_key(spark_cdc.quote_identifier(m['valid_to_seq'])) }} then 'valid_from_seq_not_before_valid_to_seq'
      when {{ spark_cdc.quote_identifier(m['valid_from']) }} > {{ spark_cdc.quote_identifier(m['valid_to']) }} then 'valid_from_after_valid_to'
    end as problem,
    {{ spark_cdc.quote_identifier(m['valid_from_seq']) }} as valid_from_seq,
    {{ spark_cdc.quote_identifier(m['valid_to_seq']) }} as valid_to_seq,
    {{ spark_cdc.quote_identifier(m['valid_from']) }} as valid_from,
    {{ spark_cdc.quote_identifier(m['valid_to']) }} as valid_to,
    {{ spark_cdc.quote_identifier(m['is_current']) }} as is_current
  from {{ model }}
)

select * from _cdc_contract_checked where problem is not null
{% endmacro %}
