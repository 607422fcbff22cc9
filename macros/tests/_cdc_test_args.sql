{#- Argument readers shared by the package's generic tests: a misused argument is a compile error
    that names the test, the model, the argument and the fix. -#}

{#- A boolean argument or option: true/false, or the strings 'true'/'false' a --vars override gives. -#}
{% macro _cdc_flag(value, test_name, model, argument) -%}
  {%- if value is sameas true or value is sameas false -%}
    {{ return(value) }}
  {%- elif value is string and value | trim | lower in ('true', 'false') -%}
    {{ return(value | trim | lower == 'true') }}
  {%- endif -%}
  {% set msg %}
spark_cdc: test {{ test_name }} on {{ model }}: argument {{ argument }} must be true or false; got '{{ value }}'.
Fix: set it in the test's arguments (or var('spark_cdc').contracts) to true or false.
  {% endset %}
  {{ exceptions.raise_compiler_error(msg | trim) }}
{%- endmacro %}

{#- The formats a test covers: `formats` (a list of enabled format names) or every enabled format. -#}
{% macro _cdc_test_formats(formats, test_name, model) -%}
  {%- set enabled = spark_cdc.enabled_formats() -%}
  {%- if formats is none -%}
    {{ return(enabled) }}
  {%- endif -%}
  {%- set names = [formats] if formats is string else formats -%}
  {%- set unknown = [] -%}
  {%- for name in names if name not in enabled -%}{%- do unknown.append(name) -%}{%- endfor -%}
  {%- if unknown -%}
    {% set msg %}
spark_cdc: test {{ test_name }} on {{ model }}: argument formats names {{ unknown | join(', ') }}, which is not an enabled format (enabled: {{ enabled | join(', ') or 'none' }}).
Fix: list only formats enabled in var('spark_cdc').formats, or leave formats out to cover every enabled format.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {{ return(names | list) }}
{%- endmacro %}
