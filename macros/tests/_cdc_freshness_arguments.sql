{#- A duration given like dbt source freshness, {count: N, period: second|minute|hour|day}, as whole
    seconds; none stays none. `context` names the test and the model, `argument` the setting, `fix`
    how to mend it, for the compile error. -#}
{% macro _cdc_freshness_duration_seconds(value, context, argument, fix) -%}
  {%- if value is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set periods = {'second': 1, 'minute': 60, 'hour': 3600, 'day': 86400} -%}
  {%- set count = value.get('count') if value is mapping else none -%}
  {%- set period = value.get('period') if value is mapping else none -%}
  {%- if not (count is number and count is not boolean and count >= 0 and period in periods) -%}
    {% set msg %}
spark_cdc: {{ context }}: {{ argument }} must be none or {count: <number >= 0>, period: second|minute|hour|day}; got '{{ value }}'.
Fix: {{ fix }}
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {{ return((count * periods[period]) | int) }}
{%- endmacro %}

{#- How a generic test names itself and its model in errors. The test node's file_key_name
    (models.<name>) is used: while dbt parses the test, the relation argument is not the model yet. -#}
{% macro _cdc_freshness_test_context(test_name, relation) -%}
  {%- set key = model.get('file_key_name') if model is mapping else none -%}
  {%- if key -%}
    {%- set name = key.split('.', 1)[-1] -%}
  {%- else -%}
    {%- set name = relation.identifier if relation.identifier is defined and relation.identifier else (relation | string) -%}
  {%- endif -%}
  {{ return("test " ~ test_name ~ " on model '" ~ name ~ "'") }}
{%- endmacro %}

{#- A duration as the failing rows show it: "warn_after 1 hour". -#}
{% macro _cdc_freshness_duration_text(argument, value) -%}
  {%- if value is none -%}
    {{ return(none) }}
  {%- endif -%}
  {{ return(argument ~ ' ' ~ value['count'] ~ ' ' ~ value['period']) }}
{%- endmacro %}
