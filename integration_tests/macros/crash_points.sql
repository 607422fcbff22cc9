{#- Simulated crashes for tests/integration/test_debezium_storage.py: with
    SPARK_CDC_IT_CRASH_AFTER_SWITCH=k, a partitioned parquet run stops right after its k-th
    partition switch (plan committed, some partitions switched, view and watermark not swapped),
    as a killed process would leave it. Unset, nothing happens. -#}
{% macro spark__cdc_after_partition_switch(parts_relation, switched) -%}
  {%- if env_var('SPARK_CDC_IT_CRASH_AFTER_SWITCH', '') == (switched | string) -%}
    {{ exceptions.raise_compiler_error('spark_cdc test: simulated crash after partition switch ' ~ switched ~ ' of ' ~ parts_relation) }}
  {%- endif -%}
{%- endmacro %}
