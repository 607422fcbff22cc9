{#- A key whose latest consumed change is a delete (or that a truncate the target applies
    removed) has no current, not-deleted version in the SCD2 target: with delete_handling=
    'new_record' its current version is a deleted one, with 'invalidate' no visible version is
    current. Failing rows: the key values, the key's latest change (op, seq) and the offending
    version's valid-from seq and op. -#}
{% test scd2_deleted_versions_closed(model, changes=none, unique_key=none, source_table=none, cdc_format=none, truncate_handling=none, meta_column_names=none, sequence_by=none) %}
  {{ return(adapter.dispatch('test_scd2_deleted_versions_closed', 'spark_cdc')(model, changes, unique_key, source_table, cdc_format, truncate_handling, meta_column_names, sequence_by)) }}
{% endtest %}

{% macro default__test_scd2_deleted_versions_closed(model, changes=none, unique_key=none, source_table=none, cdc_format=none, truncate_handling=none, meta_column_names=none, sequence_by=none) %}
  {%- set changes = spark_cdc._cdc_target_contract_changes(changes) -%}
  {%- set s = spark_cdc._cdc_target_contract_settings('scd2_deleted_versions_closed', model, 'cdc_scd2', {
        'unique_key': unique_key, 'source_table': source_table, 'cdc_format': cdc_format,
        'truncate_handling': truncate_handling, 'meta_column_names': meta_column_names, 'sequence_by': sequence_by}) -%}
  {%- set m = s['meta'] %}
with
{{ spark_cdc._cdc_target_contract_stream_ctes(s, model, changes) }}

_cdc_contract_current as (
  select
    {{ spark_cdc._cdc_target_contract_keys(s) }},
    {{ spark_cdc.quote_identifier(m['valid_from_seq']) }} as _valid_from_seq,
    {{ spark_cdc.quote_identifier(m['op']) }} as _op
  from {{ model }}
  where {{ spark_cdc.quote_identifier(m['is_current']) }} and not coalesce({{ spark_cdc.quote_identifier(m['is_deleted']) }}, false)
)

select
  {{ spark_cdc._cdc_target_contract_keys(s, 'v') }},
  s._last_op as last_change_op,
  s._last_seq as last_change_seq,
  v._valid_from_seq as current_valid_from_seq,
  v._op as current_op
from _cdc_contract_current as v
inner join _cdc_contract_stream as s on {{ spark_cdc._cdc_target_contract_key_join(s, 'v', 's') }}
where s._gone
{% endmacro %}
