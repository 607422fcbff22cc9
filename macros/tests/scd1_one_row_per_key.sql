{#- An SCD1 target shows one row per key, and no key column is null. Failing rows: the key values
    and how many rows carry them. -#}
{% test scd1_one_row_per_key(model, unique_key=none) %}
  {{ return(adapter.dispatch('test_scd1_one_row_per_key', 'spark_cdc')(model, unique_key)) }}
{% endtest %}

{% macro default__test_scd1_one_row_per_key(model, unique_key=none) %}
  {%- set s = spark_cdc._cdc_target_contract_settings('scd1_one_row_per_key', model, 'cdc_scd1', {'unique_key': unique_key}) -%}
  {%- set keys = spark_cdc._cdc_target_contract_keys(s) %}
select {{ keys }}, count(*) as row_count
from {{ model }}
group by {{ keys }}
having count(*) > 1
  {%- for c in s['key_columns'] %}
  or {{ spark_cdc.quote_identifier(c) }} is null
  {%- endfor %}
{% endmacro %}
