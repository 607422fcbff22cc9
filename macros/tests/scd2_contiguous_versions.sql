{#- The versions of a key in an SCD2 target, in valid-from order, neither overlap nor leave a gap:
    each version's valid_to_seq is the next version's valid_from_seq (and its valid_to the next
    valid_from). With delete_handling='invalidate' deleted versions are hidden, so a version closed
    by a delete may be followed by a gap (or by nothing); with 'new_record' a closed version always
    has a successor. Failing rows: the key values, the problem (overlap, gap, no_successor,
    valid_to_mismatch), the version's validity and the next version's valid-from. -#}
{% test scd2_contiguous_versions(model, unique_key=none, delete_handling=none, meta_column_names=none) %}
  {{ return(adapter.dispatch('test_scd2_contiguous_versions', 'spark_cdc')(model, unique_key, delete_handling, meta_column_names)) }}
{% endtest %}

{% macro default__test_scd2_contiguous_versions(model, unique_key=none, delete_handling=none, meta_column_names=none) %}
  {%- set s = spark_cdc._cdc_target_contract_settings('scd2_contiguous_versions', model, 'cdc_scd2',
                {'unique_key': unique_key, 'delete_handling': delete_handling, 'meta_column_names': meta_column_names}) -%}
  {%- set m = s['meta'] -%}
  {%- set invalidate = s['delete_handling'] == 'invalidate' -%}
  {%- set keys = spark_cdc._cdc_target_contract_keys(s) %}
with _cdc_contract_versions as (
  select
    {{ keys }},
    {{ spark_cdc.quote_identifier(m['valid_from_seq']) }} as valid_from_seq,
    {{ spark_cdc.quote_identifier(m['valid_to_seq']) }} as valid_to_seq,
    {{ spark_cdc.quote_identifier(m['valid_from']) }} as valid_from,
    {{ spark_cdc.quote_identifier(m['valid_to']) }} as valid_to,
    case when {{ spark_cdc.quote_identifier(m['valid_to_seq']) }} is not null then {{ spark_cdc.change_order_key(spark_cdc.quote_identifier(m['valid_to_seq'])) }} end as _to_ord,
    lead({{ spark_cdc.quote_identifier(m['valid_from_seq']) }}) over (partition by {{ keys }} order by {{ spark_cdc.change_order_key(spark_cdc.quote_identifier(m['valid_from_seq'])) }}) as next_valid_from_seq,
    lead({{ spark_cdc.quote_identifier(m['valid_from']) }}) over (partition by {{ keys }} order by {{ spark_cdc.change_order_key(spark_cdc.quote_identifier(m['valid_from_seq'])) }}) as next_valid_from,
    lead(true, 1, false) over (partition by {{ keys }} order by {{ spark_cdc.change_order_key(spark_cdc.quote_identifier(m['valid_from_seq'])) }}) as _has_next
  from {{ model }}
),

_cdc_contract_checked as (
  select
    {{ keys }},
    case
      when not _has_next then {% if invalidate %}null{% else %}case when valid_to_seq is not null then 'no_successor' end{% endif %}
      when _to_ord is null then 'overlap'
      when _to_ord > {{ spark_cdc.change_order_key('next_valid_from_seq') }} then 'overlap'
      when _to_ord < {{ spark_cdc.change_order_key('next_valid_from_seq') }} then {{ "null" if invalidate else "'gap'" }}
      when not (valid_to <=> next_valid_from) then 'valid_to_mismatch'
    end as problem,
    valid_from_seq, valid_to_seq, valid_from, valid_to, next_valid_from_seq, next_valid_from
  from _cdc_contract_versions
)

select * from _cdc_contract_checked where problem is not null
{% endmacro %}
