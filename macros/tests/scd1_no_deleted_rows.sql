{#- An SCD1 target shows no row of a key whose latest consumed change is a delete, or that a
    truncate it applies (truncate_handling='apply') removed. With delete_handling='flag' such keys
    may stay, flagged deleted, and a flagged row must be one of them. Failing rows: the key values,
    the problem, the row's flag, the key's latest change (op, seq) and the row's stored seq. -#}
{% test scd1_no_deleted_rows(model, changes=none, unique_key=none, source_table=none, cdc_format=none, delete_handling=none, truncate_handling=none, meta_column_names=none, sequence_by=none) %}
  {{ return(adapter.dispatch('test_scd1_no_deleted_rows', 'spark_cdc')(model, changes, unique_key, source_table, cdc_format, delete_handling, truncate_handling, meta_column_names, sequence_by)) }}
{% endtest %}

{% macro default__test_scd1_no_deleted_rows(model, changes=none, unique_key=none, source_table=none, cdc_format=none, delete_handling=none, truncate_handling=none, meta_column_names=none, sequence_by=none) %}
  {%- set changes = spark_cdc._cdc_target_contract_changes(changes) -%}
  {%- set s = spark_cdc._cdc_target_contract_settings('scd1_no_deleted_rows', model, 'cdc_scd1', {
        'unique_key': unique_key, 'source_table': source_table, 'cdc_format': cdc_format,
        'delete_handling': delete_handling, 'truncate_handling': truncate_handling,
        'meta_column_names': meta_column_names, 'sequence_by': sequence_by}) -%}
  {#- The stream first: its checks (sequence_by, key columns) explain a misuse best. -#}
  {%- set stream = spark_cdc._cdc_target_contract_stream_ctes(s, model, changes) -%}
  {%- set flag = s['delete_handling'] == 'flag' -%}
  {%- if flag -%}{%- do spark_cdc._cdc_target_contract_types(s, model, [s['meta']['deleted']], "meta_column_names.deleted") -%}{%- endif %}
with
{{ stream }}

_cdc_contract_target as (
  select
    {{ spark_cdc._cdc_target_contract_keys(s) }},
    {{ spark_cdc.quote_identifier(s['meta']['seq']) }} as _stored_seq,
    {% if flag %}coalesce({{ spark_cdc.quote_identifier(s['meta']['deleted']) }}, false){% else %}false{% endif %} as _flagged
  from {{ model }}
),

_cdc_contract_checked as (
  select
    {{ spark_cdc._cdc_target_contract_keys(s, 't') }},
    case
      when not t._flagged and s._gone then '{{ "deleted_key_not_flagged" if flag else "deleted_key_visible" }}'
      when t._flagged and s._live then 'live_key_flagged'
    end as problem,
    t._flagged as flagged_deleted,
    s._last_op as last_change_op,
    s._last_seq as last_change_seq,
    t._stored_seq as stored_seq
  from _cdc_contract_target as t
  inner join _cdc_contract_stream as s on {{ spark_cdc._cdc_target_contract_key_join(s, 't', 's') }}
)

select * from _cdc_contract_checked where problem is not null
{% endmacro %}
