{#- An SCD2 target has at most one current version per key. Failing rows: the key values and the
    number of its current versions. -#}
{% test scd2_one_current_version(model, unique_key=none, meta_column_names=none) %}
  {{ return(adapter.dispatch('test_scd2_one_current_version', 'spark_cdc')(model, unique_key, meta_column_names)) }}
{% endtest %}

{% macro default__test_scd2_one_current_version(model, unique_key=none, meta_column_names=none) %}
  {%- set s = spark_cdc._cdc_target_contract_settings('scd2_one_current_version', model, 'cdc_scd2',
                {'unique_key': unique_key, 'meta_column_names': meta_column_names}) -%}
  {%- set keys = spark_cdc._cdc_target_contract_keys(s) %}
select {{ keys }}, count(*) as current_versions
from {{ model }}
where {{ spark_cdc.quote_identifier(s['meta']['is_current']) }}
group by {{ keys }}
having count(*) > 1
{% endmacro %}
