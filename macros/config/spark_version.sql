{#- The Spark version the invocation runs on, as [major, minor]: read once per invocation with
    `select version()` (_invocation_memo). Before
    execution (parsing), when no SQL runs, Spark 4 is assumed. -#}
{% macro _spark_version() -%}
  {%- if not execute -%}{{ return([4, 0]) }}{%- endif -%}
  {%- set kept = spark_cdc._invocation_memo() -%}
  {%- if 'spark_version' not in kept -%}
    {%- set text = run_query('select version()').columns[0].values()[0] -%}
    {%- set parts = (text.split(' ')[0]).split('.') -%}
    {%- do kept.update({'spark_version': [parts[0] | int, parts[1] | int]}) -%}
  {%- endif -%}
  {{ return(kept['spark_version']) }}
{%- endmacro %}

{#- A dict for what one invocation learns once and every node reuses (the Spark version, raw
    relations' columns), kept on the run's graph, which every node's context shares. Keyed by the
    invocation's id: a program that hands dbtRunner the same manifest again keeps its graph, and
    the next invocation must look again. -#}
{% macro _invocation_memo() -%}
  {%- set kept = graph.get('spark_cdc_invocation_memo') -%}
  {%- if kept is none or kept['invocation'] != invocation_id -%}
    {%- set kept = {'invocation': invocation_id, 'values': {}} -%}
    {%- do graph.update({'spark_cdc_invocation_memo': kept}) -%}
  {%- endif -%}
  {{ return(kept['values']) }}
{%- endmacro %}

{#- True on Spark 3.x, which has no VARIANT type and no is_valid_utf8 / make_valid_utf8: the macros
    that use them take their Spark 3.5 form, which gives the same rows (README, Supported runtimes). -#}
{% macro _spark3() -%}
  {{ return(spark_cdc._spark_version()[0] < 4) }}
{%- endmacro %}
