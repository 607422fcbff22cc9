{#- cdc_scd2: a history table (one row per version of each key) kept in step with the canonical
    change stream. The model's SQL (or Python DataFrame) selects changes shaped like spark_cdc's
    cdc_changes; each run applies the ones loaded since the last run. See docs/cdc_scd2.md.
    The body is shared with cdc_scd1: cdc_common/materialize.sql, what differs in cdc_common/kind.sql. -#}
{% materialization cdc_scd2, adapter='spark', supported_languages=['sql', 'python'] %}
  {%- set run = spark_cdc._cdc_materialize_prepare('cdc_scd2') -%}
  {%- if model['language'] == 'python' -%}
    {#- Here, not in the body: dbt runs a Python model's code only from its materialization block. -#}
    {%- call statement('cdc_input', language='python') -%}
{{ run['python_code'] }}
    {%- endcall -%}
  {%- endif -%}
  {{ return(spark_cdc._cdc_materialize_apply(run)) }}
{% endmaterialization %}
