{#- Every row of an SCD1 target holds its key's latest consumed change: its seq equals the key's
    latest sequence in the change stream (for a flagged row ended by a truncate, that truncate's),
    and every key whose latest change is an insert, update, upsert or snapshot (not followed by a
    truncate the target applies) has a row. Failing rows: the key values, the problem (missing,
    stale, ahead, not_in_stream), the row's stored seq and the stream's expected seq and op. -#}
{% test scd1_latest_sequence(model, changes=none, unique_key=none, source_table=none, cdc_format=none, delete_handling=none, truncate_handling=none, meta_column_names=none, sequence_by=none) %}
  {{ return(adapter.dispatch('test_scd1_latest_sequence', 'spark_cdc')(model, changes, unique_key, source_table, cdc_format, delete_handling, truncate_handling, meta_column_names, sequence_by)) }}
{% endtest %}

{% macro default__test_scd1_latest_sequence(model, changes=none, unique_key=none, source_table=none, cdc_format=none, delete_handling=none, truncate_handling=none, meta_column_names=none, sequence_by=none) %}
  {%- set changes = spark_cdc._cdc_target_contract_changes(changes) -%}
  {%- set s = spark_cdc._cdc_target_contract_settings('scd1_latest_sequence', model, 'cdc_scd1', {
        'unique_key': unique_key, 'source_table': source_table, 'cdc_format': cdc_format,
        'delete_handling': delete_handling, 'truncate_handling': truncate_handling,
        'meta_column_names': meta_column_names, 'sequence_by': sequence_by}) -%}
  {#- The stream first: its checks (sequence_by, key columns) explain a misuse best. -#}
  {%- set stream = spark_cdc._cdc_target_contract_stream_ctes(s, model, changes) -%}
  {%- do spark_cdc._cdc_target_contract_types(s, model, [s['meta']['seq']], "meta_column_names.seq") %}
with
{{ stream }}

_cdc_contract_target as (
  select
    {{ spark_cdc._cdc_target_contract_keys(s) }},
    {{ spark_cdc.quote_identifier(s['meta']['seq']) }} as _stored_seq,
    {{ spark_cdc.change_order_key(spark_cdc.quote_identifier(s['meta']['seq'])) }} as _stored_ord
  from {{ model }}
),

_cdc_contract_checked as (
  select
    {%- for c in s['key_columns'] %}
    coalesce(t.{{ spark_cdc.quote_identifier(c) }}, s.{{ spark_cdc.quote_identifier(c) }}) as {{ spark_cdc.quote_identifier(c) }},
    {%- endfor %}
    case
      when t._stored_ord is null then case when s._live then 'missing' end
      when s._k is null then 'not_in_stream'
      when s._expected_ord is null then null
      when t._stored_ord < s._expected_ord then 'stale'
      when t._stored_ord > s._expected_ord then 'ahead'
    end as problem,
    t._stored_seq as stored_seq,
    s._expected_seq as expected_seq,
    s._last_op as last_change_op
  from _cdc_contract_target as t
  full outer join _cdc_contract_stream as s on {{ spark_cdc._cdc_target_contract_key_join(s, 't', 's') }}
)

select * from _cdc_contract_checked where problem is not null
{% endmacro %}
