{#- Validity of a change stream shaped like cdc_changes: every row has a key (except truncates), an
    order value (seq.s1, or the landing order in seq.s3 where the format falls back to it), a canonical op, a source table and an enabled cdc_format. Fails with one
    row per violation: the offending row's columns and `violation`. -#}
{% test cdc_valid_change_stream(model, formats=none) %}
  {{ return(adapter.dispatch('test_cdc_valid_change_stream', 'spark_cdc')(model, formats)) }}
{% endtest %}

{% macro default__test_cdc_valid_change_stream(model, formats=none) -%}
  {%- set names = spark_cdc._cdc_test_formats(formats, 'cdc_valid_change_stream', model) -%}
  {%- set ops = ['insert', 'update', 'upsert', 'delete', 'snapshot', 'truncate', 'key_only'] -%}
  {%- set literals = [] -%}
  {%- for name in names -%}{%- do literals.append(spark_cdc._sql_string(name)) -%}{%- endfor -%}
{#- One pass over the stream: each row's violations as an array, exploded into failing rows. -#}
select v.violation, m.*
from {{ model }} as m
lateral view explode(filter(array(
  case when m.key is null and not (m.op <=> 'truncate') then 'key_null' end,
  {#- s1 is the source's order; a format that falls back to the landing order keeps it in s3
      (YDB without virtual timestamps) and leaves s1 null. #}
  case when m.seq is null then 'seq_null' when m.seq.s1 is null and m.seq.s3 is null then 'seq_s1_null' end,
  case when m.op is null or m.op not in ({% for op in ops %}'{{ op }}'{{ ', ' if not loop.last }}{% endfor %}) then 'op_invalid' end,
  case when m.source_table is null then 'source_table_null' end,
  case when {% if literals %}m.cdc_format is null or m.cdc_format not in ({{ literals | join(', ') }}){% else %}true{% endif %} then 'cdc_format_not_enabled' end
), x -> x is not null)) v as violation
{%- endmacro %}
