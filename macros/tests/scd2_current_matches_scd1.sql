{#- The current, not-deleted versions of an SCD2 target equal the visible, not-deleted rows of an
    SCD1 target of the same source table, key by key, on the compared columns. Failing rows: the key
    values, the problem (missing_in_scd1, missing_in_scd2, differs) and the columns that differ. -#}
{% test scd2_current_matches_scd1(model, scd1_model, columns=none, unique_key=none, meta_column_names=none, scd1_meta_column_names=none) %}
  {{ return(adapter.dispatch('test_scd2_current_matches_scd1', 'spark_cdc')(model, scd1_model, columns, unique_key, meta_column_names, scd1_meta_column_names)) }}
{% endtest %}

{% macro default__test_scd2_current_matches_scd1(model, scd1_model, columns=none, unique_key=none, meta_column_names=none, scd1_meta_column_names=none) %}
  {%- set name = 'scd2_current_matches_scd1' -%}
  {%- set s = spark_cdc._cdc_target_contract_settings(name, model, 'cdc_scd2',
                {'unique_key': unique_key, 'meta_column_names': meta_column_names}) -%}
  {%- set s1 = spark_cdc._cdc_target_contract_settings(name, scd1_model, 'cdc_scd1',
                {'unique_key': s['key_columns'], 'meta_column_names': scd1_meta_column_names, 'argument': 'scd1_model'}) -%}
  {%- set m = s['meta'] -%}
  {%- set keys = s['key_columns'] | map('lower') | list -%}
  {%- set scd1_columns = {} -%}
  {%- set compared = [] -%}
  {%- if execute -%}
    {%- for col in adapter.get_columns_in_relation(scd1_model) -%}{%- do scd1_columns.update({col.name | lower: col.name}) -%}{%- endfor -%}
    {%- if columns is not none -%}
      {%- set listed = [columns] if columns is string else columns -%}
      {%- do spark_cdc._cdc_target_contract_types(s, model, listed, 'columns') -%}
      {%- do spark_cdc._cdc_target_contract_types(s1, scd1_model, listed, 'columns') -%}
      {%- for c in listed if c | lower not in keys -%}{%- do compared.append(c) -%}{%- endfor -%}
    {%- else -%}
      {%- set meta_names = (s['meta'].values() | map('lower') | list) + (s1['meta'].values() | map('lower') | list) -%}
      {%- for col in adapter.get_columns_in_relation(model) -%}
        {%- set n = col.name | lower -%}
        {%- if n in scd1_columns and n not in meta_names and n not in keys -%}{%- do compared.append(col.name) -%}{%- endif -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endif -%}
  {%- set deleted = s1['meta']['deleted'] -%}
  {%- set flagged = deleted | lower in scd1_columns %}
with _cdc_contract_scd2 as (
  select *
  from {{ model }}
  where {{ spark_cdc.quote_identifier(m['is_current']) }} and not coalesce({{ spark_cdc.quote_identifier(m['is_deleted']) }}, false)
),

_cdc_contract_scd1 as (
  select *
  from {{ scd1_model }}
  {%- if flagged %}
  where not coalesce({{ spark_cdc.quote_identifier(deleted) }}, false)
  {%- endif %}
),

_cdc_contract_checked as (
  select
    {%- for c in s['key_columns'] %}
    coalesce(h.{{ spark_cdc.quote_identifier(c) }}, c.{{ spark_cdc.quote_identifier(c) }}) as {{ spark_cdc.quote_identifier(c) }},
    {%- endfor %}
    case
      when c._cdc_contract_row is null then 'missing_in_scd1'
      when h._cdc_contract_row is null then 'missing_in_scd2'
    end as _side,
    {%- if compared %}
    filter(array(
      {%- for col in compared %}
      case when not (h.{{ spark_cdc.quote_identifier(col) }} <=> c.{{ spark_cdc.quote_identifier(col) }}) then {{ spark_cdc._sql_string(col) }} end{{ ',' if not loop.last }}
      {%- endfor %}
    ), x -> x is not null) as differing_columns
    {%- else %}
    cast(array() as array<string>) as differing_columns
    {%- endif %}
  from (select *, true as _cdc_contract_row from _cdc_contract_scd2) as h
  full outer join (select *, true as _cdc_contract_row from _cdc_contract_scd1) as c
    on {{ spark_cdc._cdc_target_contract_key_join(s, 'h', 'c') }}
)

select
  {{ spark_cdc._cdc_target_contract_keys(s) }},
  coalesce(_side, 'differs') as problem,
  case when _side is null then differing_columns else cast(array() as array<string>) end as differing_columns
from _cdc_contract_checked
where _side is not null or size(differing_columns) > 0
{% endmacro %}
