{#- Union of the enabled staging models' rows with `record_status`, projecting `columns`. -#}
{% macro union_staged(record_status, columns) -%}
  {{ return(adapter.dispatch('union_staged', 'spark_cdc')(record_status, columns)) }}
{%- endmacro %}

{% macro default__union_staged(record_status, columns) -%}
  {%- for format in spark_cdc.enabled_formats() %}
select {{ columns | join(', ') }}
from {{ ref('stg_cdc__' ~ format) }}
where record_status = {{ spark_cdc._sql_string(record_status) }}
    {% if not loop.last %}union all{% endif %}
  {%- endfor %}
{%- endmacro %}
