{#- Union of the enabled formats' staged rows with `record_status`, projecting `columns`. A staged
    change whose before image names another key (`before_key`: a primary-key update, such as a Qlik
    UPDATE whose beforeData holds the old key) is two changes of the canonical stream, both at its
    seq: the delete of the old key (the before image, no after image) and the change of the new one.
    Every reader of staged changes (cdc_changes, cdc_sequence_conflicts) goes through here, so the
    old key ends the same way in every format, whatever the arrival order. `cdc_format` is selected
    as the format's literal (every staging model writes it so): a reader that filters on it, as
    each cdc_scd1 / cdc_scd2 target does, then reads its own format's staging tables only, because
    Spark drops the union's other branches when it plans the query. -#}
{% macro union_staged(record_status, columns) -%}
  {{ return(adapter.dispatch('union_staged', 'spark_cdc')(record_status, columns)) }}
{%- endmacro %}

{% macro default__union_staged(record_status, columns) -%}
  {#- A quarantined row a later model has staged again successfully (a Qlik data message retried
      once its metadata arrived) is resolved: it leaves the quarantine; the staging model keeps it. -#}
  {%- set retried_by = {'stg_cdc__qlik_replicate': 'stg_cdc__qlik_replicate_retried'} -%}
  {%- set parts = [] -%}
  {%- for format in spark_cdc.enabled_formats() -%}
    {%- for model_name in spark_cdc.format_staging_models(format) -%}
      {%- do parts.append((format, model_name, ref(model_name))) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for format, model_name, relation in parts %}
select {% for c in columns -%}
  {%- if c == 'cdc_format' -%}{{ spark_cdc._sql_string(format) }} as cdc_format
  {%- elif record_status == 'change' -%}{{ spark_cdc._key_change_delete_column(c) }}
  {%- else -%}{{ c }}{%- endif -%}{{ ', ' if not loop.last }}
{%- endfor %}
from {{ relation }} as s
    {%- if record_status == 'quarantined' and model_name in retried_by %}
left anti join {{ ref(retried_by[model_name]) }} as r
  on r.raw_ref.relation = s.raw_ref.relation
 and r.raw_ref.partition <=> s.raw_ref.partition
 and r.raw_ref.order <=> s.raw_ref.order
 and (s.raw_ref.order is not null or r.raw_value <=> s.raw_value)
    {%- endif %}
    {%- if record_status == 'change' %}
{#- One read of the model: a key change's row is generated twice (the second time as the delete). #}
lateral view explode(case when before_key is not null then array(false, true) else array(false) end) kc as _key_change_delete
    {%- endif %}
where record_status = {{ spark_cdc._sql_string(record_status) }}
    {% if not loop.last %}union all{% endif %}
  {%- endfor %}
{%- endmacro %}

{#- One column of a staged change row: for the delete a primary-key update implies (the row's
    `_key_change_delete` copy, see union_staged), the delete's value. -#}
{% macro _key_change_delete_column(column) -%}
  {%- set derived = {
      'op': "'delete'",
      'key': 's.before_key',
      'before_key': 'cast(null as string)',
      'after': 'cast(null as string)',
      'present_columns': 'cast(null as array<string>)',
      'changed_columns': 'cast(null as array<string>)',
  } -%}
  {%- if column in derived -%}
  case when _key_change_delete then {{ derived[column] }} else s.{{ column }} end as {{ column }}
  {%- else -%}
  s.{{ column }}
  {%- endif -%}
{%- endmacro %}

{#- The staging models whose rows a format contributes to the canonical stream (all shaped like
    stg_cdc__debezium). Most formats have one; a format that reassembles records across runs adds
    the model that emits them. -#}
{% macro format_staging_models(format) -%}
  {{ return(adapter.dispatch('format_staging_models', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__format_staging_models(format) -%}
  {%- set extra = {
      'aurora_dsql': ['stg_cdc__aurora_dsql_reassembled'],
      'qlik_replicate': ['stg_cdc__qlik_replicate_retried'],
  } -%}
  {{ return(['stg_cdc__' ~ format] + extra.get(format, [])) }}
{%- endmacro %}
