{#- The changes a CDC target consumes in this run: rows of its input relation (the model's SQL or
    Python output, shaped like cdc_changes) for its format and source table, loaded after
    `consumed_through`. -#}
{% macro cdc_batch_sql(input_relation, source_table, consumed_through, cdc_format=none) -%}
  {{ return(adapter.dispatch('cdc_batch_sql', 'spark_cdc')(input_relation, source_table, consumed_through, cdc_format)) }}
{%- endmacro %}

{% macro default__cdc_batch_sql(input_relation, source_table, consumed_through, cdc_format=none) -%}
select
  key as _k,
  seq as _seq,
  {{ spark_cdc.change_order_key('seq') }} as _ord,
  raw_ref.order as _arrival,
  {#- key_only changes (CockroachDB envelope=key_only) carry no column values: refuse them, loudly. -#}
  case when op = 'key_only' then raise_error({{ spark_cdc._sql_string(spark_cdc._key_only_error(source_table)) }}) else op end as _op,
  after as _after,
  before as _before,
  present_columns as _present,
  type_hints as _hints,
  commit_ts as _commit_ts,
  cdc_loaded_at as _loaded_at
from {{ input_relation }}
where op in ('insert', 'update', 'upsert', 'snapshot', 'delete', 'truncate', 'key_only')
  and (key is not null or op = 'truncate')
  {%- if cdc_format %}
  and cdc_format = {{ spark_cdc._sql_string(cdc_format) }}
  {%- endif %}
  {%- if source_table %}
  and source_table = {{ spark_cdc._sql_string(source_table) }}
  {%- endif %}
  {%- if consumed_through %}
  and cdc_loaded_at > timestamp {{ spark_cdc._sql_string(consumed_through) }}
  {%- endif %}
{%- endmacro %}

{% macro _key_only_error(source_table) -%}
  {{- return("spark_cdc: model '" ~ model['name'] ~ "' received key_only changes" ~ (" for source table '" ~ source_table ~ "'" if source_table else "") ~ ": a CockroachDB changefeed with envelope=key_only carries keys but no column values, so no target can be built from it. Fix: recreate the changefeed with envelope=wrapped (or bare/row) for the tables this model reads, or set this model's source_table to a table whose feed carries values.") -}}
{%- endmacro %}
