{#- The Spark version the invocation runs on, as [major, minor]: read once per invocation with
    `select version()` and kept on the run's graph, which every node's context shares. Before
    execution (parsing), when no SQL runs, Spark 4 is assumed. -#}
{% macro _spark_version() -%}
  {%- if not execute -%}{{ return([4, 0]) }}{%- endif -%}
  {%- set known = graph.get('spark_cdc_spark_version') -%}
  {%- if known is none -%}
    {%- set text = run_query('select version()').columns[0].values()[0] -%}
    {%- set parts = (text.split(' ')[0]).split('.') -%}
    {%- set known = [parts[0] | int, parts[1] | int] -%}
    {%- do graph.update({'spark_cdc_spark_version': known}) -%}
  {%- endif -%}
  {{ return(known) }}
{%- endmacro %}

{#- True on Spark 3.x, which has no VARIANT type and no is_valid_utf8 / make_valid_utf8: the macros
    that use them take their Spark 3.5 form, which gives the same rows (README, Supported runtimes). -#}
{% macro _spark3() -%}
  {{ return(spark_cdc._spark_version()[0] < 4) }}
{%- endmacro %}
