{#- The changes a CDC target consumes in this run: rows of its input relation (the model's SQL or
    Python output, shaped like cdc_changes) for its format and source table, loaded after
    `consumed_through`.

    A row without a key (other than a truncate) or without a sequence cannot be applied: the run
    fails with an error naming the model and the fix, before anything is written. (Staging never
    emits such rows — it quarantines them as missing_key / missing_sequence — so they come from the
    target model's own SQL.)

    With `rebuild_keys`, the batch also carries the complete history (in the input relation) of every
    key that a sequence conflict detected since `consumed_through` touches, flagged `_rebuild`, plus
    one `_op = 'rebuild'` row per such key whose `_loaded_at` is the detection time. The apply then
    recomputes those keys from the batch alone: a change applied before its conflict was known
    is taken back. Without `rebuild_keys` the batch has no `_rebuild` column. -#}
{% macro cdc_batch_sql(input_relation, source_table, consumed_through, cdc_format=none, rebuild_keys=false) -%}
  {{ return(adapter.dispatch('cdc_batch_sql', 'spark_cdc')(input_relation, source_table, consumed_through, cdc_format, rebuild_keys)) }}
{%- endmacro %}

{% macro default__cdc_batch_sql(input_relation, source_table, consumed_through, cdc_format=none, rebuild_keys=false) -%}
  {%- set conflicts = spark_cdc._cdc_new_conflicts_sql(source_table, consumed_through, cdc_format) if rebuild_keys else none -%}
  {%- if conflicts is not none %}
select * from (
  {%- endif %}
select
  {{- spark_cdc._cdc_batch_columns(source_table) }}
  {%- if rebuild_keys %},
  false as _rebuild
  {%- endif %}
from {{ input_relation }}
where {{ spark_cdc._cdc_batch_filter(source_table, cdc_format) }}
  {%- if consumed_through %}
  and cdc_loaded_at > timestamp {{ spark_cdc._sql_string(consumed_through) }}
  {%- endif %}
  {%- if conflicts is not none %}
union all
select
  {{- spark_cdc._cdc_batch_columns(source_table) }},
  true as _rebuild
from {{ input_relation }}
where {{ spark_cdc._cdc_batch_filter(source_table, cdc_format) }}
  and key in (select key from ({{ conflicts }}) as c)
union all
select
  key as _k,
  seq as _seq,
  {{ spark_cdc.change_order_key('seq') }} as _ord,
  raw_ref.order as _arrival,
  'rebuild' as _op,
  cast(null as string) as _after,
  cast(null as string) as _before,
  cast(null as array<string>) as _present,
  cast(null as map<string, string>) as _hints,
  cast(null as timestamp) as _commit_ts,
  cdc_loaded_at as _loaded_at,
  true as _rebuild
from ({{ conflicts }}) as c
) as batch_with_rebuilds
  {%- endif %}
{%- endmacro %}

{% macro _cdc_batch_columns(source_table) %}
  key as _k,
  seq as _seq,
  {{ spark_cdc.change_order_key('seq') }} as _ord,
  raw_ref.order as _arrival,
  {#- key_only changes (CockroachDB envelope=key_only) carry no column values; a change without a
      key or sequence cannot be ordered or placed. Refuse them, loudly: raise_error fails the query
      that first reads the batch (the materialization's probe), before anything is written. #}
  case
    when op = 'key_only' then raise_error({{ spark_cdc._sql_string(spark_cdc._key_only_error(source_table)) }})
    when key is null and op != 'truncate' then raise_error({{ spark_cdc._sql_string(spark_cdc._null_key_error(source_table)) }})
    when seq is null or (seq.s1 is null and seq.s2 is null and seq.s3 is null) then raise_error({{ spark_cdc._sql_string(spark_cdc._null_sequence_error(source_table)) }})
    else op
  end as _op,
  after as _after,
  before as _before,
  present_columns as _present,
  type_hints as _hints,
  commit_ts as _commit_ts,
  cdc_loaded_at as _loaded_at
{%- endmacro %}

{% macro _cdc_batch_filter(source_table, cdc_format) -%}
op in ('insert', 'update', 'upsert', 'snapshot', 'delete', 'truncate', 'key_only')
  {%- if cdc_format %}
  and cdc_format = {{ spark_cdc._sql_string(cdc_format) }}
  {%- endif %}
  {%- if source_table %}
  and source_table = {{ spark_cdc._sql_string(source_table) }}
  {%- endif %}
{%- endmacro %}

{#- SELECT of the conflict rows detected after `consumed_through` for this format and table, or none
    when there are none (checked with one query, so a run without new conflicts reads no history).
    The conflicts model is found in the graph rather than through ref(): the target depends on it
    already, through cdc_changes, and a ref() here would make every CDC target declare it. -#}
{% macro _cdc_new_conflicts_sql(source_table, consumed_through, cdc_format) -%}
  {%- if not execute or not consumed_through -%}{{ return(none) }}{%- endif -%}
  {%- set nodes = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
                  | selectattr('package_name', 'equalto', 'spark_cdc')
                  | selectattr('name', 'equalto', 'cdc_sequence_conflicts') | list -%}
  {%- if not nodes or not nodes[0].config.enabled -%}{{ return(none) }}{%- endif -%}
  {%- set relation = adapter.get_relation(database=nodes[0].database, schema=nodes[0].schema, identifier=nodes[0].alias) -%}
  {%- if relation is none -%}{{ return(none) }}{%- endif -%}
  {%- set conflicts_sql -%}
select key, seq, raw_ref, cdc_loaded_at
from {{ relation }}
where row_kind = 'conflict'
  and cdc_loaded_at > timestamp {{ spark_cdc._sql_string(consumed_through) }}
  {%- if cdc_format %}
  and cdc_format = {{ spark_cdc._sql_string(cdc_format) }}
  {%- endif %}
  {%- if source_table %}
  and source_table = {{ spark_cdc._sql_string(source_table) }}
  {%- endif %}
  {%- endset -%}
  {%- set found = run_query('select count(*) from (' ~ conflicts_sql ~ ') as c') -%}
  {{ return(conflicts_sql if found[0][0] > 0 else none) }}
{%- endmacro %}

{% macro _key_only_error(source_table) -%}
  {{- return("spark_cdc: model '" ~ model['name'] ~ "' received key_only changes" ~ (" for source table '" ~ source_table ~ "'" if source_table else "") ~ ": a CockroachDB changefeed with envelope=key_only carries keys but no column values, so no target can be built from it. Fix: recreate the changefeed with envelope=wrapped (or bare/row) for the tables this model reads, or set this model's source_table to a table whose feed carries values.") -}}
{%- endmacro %}

{% macro _null_key_error(source_table) -%}
  {{- return("spark_cdc: model '" ~ model['name'] ~ "' selected a change with a null key" ~ (" for source table '" ~ source_table ~ "'" if source_table else "") ~ ". A change without a key cannot be applied, and dropping it would lose it silently; nothing was written. cdc_changes never has one (staging quarantines them as missing_key), so the model's own SQL produced it. Fix: correct the model's key expression, or filter such rows out explicitly in the model (where key is not null or op = 'truncate').") -}}
{%- endmacro %}

{% macro _null_sequence_error(source_table) -%}
  {{- return("spark_cdc: model '" ~ model['name'] ~ "' selected a change with a null seq" ~ (" for source table '" ~ source_table ~ "'" if source_table else "") ~ ". A change without a sequence cannot be ordered, and dropping it would lose it silently; nothing was written. cdc_changes never has one (staging quarantines them as missing_sequence), so the model's own SQL produced it. Fix: keep cdc_changes.seq (or build a struct<s1,s2,s3: decimal(38,0)> that orders the table's changes) in the model, or filter such rows out explicitly.") -}}
{%- endmacro %}
