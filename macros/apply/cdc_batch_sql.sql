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
{% macro cdc_batch_sql(input_relation, source_table, consumed_through, cdc_format=none, rebuild_keys=false, sequence_by=none, apply_truncates=true) -%}
  {{ return(adapter.dispatch('cdc_batch_sql', 'spark_cdc')(input_relation, source_table, consumed_through, cdc_format, rebuild_keys, sequence_by, apply_truncates)) }}
{%- endmacro %}

{% macro default__cdc_batch_sql(input_relation, source_table, consumed_through, cdc_format=none, rebuild_keys=false, sequence_by=none, apply_truncates=true) -%}
  {%- set conflicts = spark_cdc._cdc_new_conflicts_sql(source_table, consumed_through, cdc_format) if rebuild_keys else none -%}
  {%- set seq_expr = spark_cdc._cdc_sequence_by_expr(input_relation, sequence_by) if sequence_by else 'seq' -%}
  {%- if sequence_by %}
select
  {#- Every batch column but _op (`* except` is Spark 4 syntax), then the checked _op. #}
  _k, _seq, _ord, _arrival, _after, _before, _present, _hints, _commit_ts, _loaded_at, _raw_ref,
  {%- if rebuild_keys %} _rebuild,{% endif %}
  {#- The user's sequence must tell apart every change of a key: two changes of different effect
      at one sequence cannot be ordered, and applying either would be a silent pick. The check
      sits in _op, which every consumer reads, so it cannot be pruned away. #}
  case when _op not in ('truncate', 'rebuild')
        and size(collect_set(case when _op not in ('truncate', 'rebuild')
                                  then named_struct('e', {{ spark_cdc._change_effect('_op') }}, 'a', _after) end)
                 over (partition by _k, _ord)) > 1
       then raise_error({{ spark_cdc._sql_string(spark_cdc._sequence_by_tie_error(source_table, sequence_by)) }})
       else _op
  end as _op
  from (
  {%- endif %}
  {%- if conflicts is not none %}
select * from (
  {%- endif %}
select
  {{- spark_cdc._cdc_batch_columns(source_table, seq_expr) }}
  {%- if rebuild_keys %},
  false as _rebuild
  {%- endif %}
from {{ input_relation }}
where {{ spark_cdc._cdc_batch_filter(source_table, cdc_format, apply_truncates) }}
  {%- if consumed_through %}
  and cdc_loaded_at > timestamp {{ spark_cdc._sql_string(consumed_through) }}
  {%- endif %}
  {%- if conflicts is not none %}
union all
select
  {{- spark_cdc._cdc_batch_columns(source_table, seq_expr) }},
  true as _rebuild
from {{ input_relation }}
where {{ spark_cdc._cdc_batch_filter(source_table, cdc_format, apply_truncates) }}
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
  raw_ref as _raw_ref,
  true as _rebuild
from ({{ conflicts }}) as c
) as batch_with_rebuilds
  {%- endif %}
  {%- if sequence_by %}
) as unchecked
  {%- endif %}
{%- endmacro %}

{#- Select-list of cdc_batch_sql: the canonical change columns renamed to the apply engine's internal
    names (_k, _seq, _ord, _arrival, ...), with raise_error guards that refuse key_only changes and
    changes without key or sequence. -#}
{% macro _cdc_batch_columns(source_table, seq_expr='seq') %}
  key as _k,
  {{ seq_expr }} as _seq,
  {{ spark_cdc.change_order_key(seq_expr) }} as _ord,
  raw_ref.order as _arrival,
  {#- key_only changes (CockroachDB envelope=key_only) carry no column values; a change without a
      key or sequence cannot be ordered or placed. Refuse them, loudly: raise_error fails the query
      that first reads the batch (the materialization's probe), before anything is written. #}
  case
    when op = 'key_only' then raise_error({{ spark_cdc._sql_string(spark_cdc._key_only_error(source_table)) }})
    when key is null and op != 'truncate' then raise_error({{ spark_cdc._sql_string(spark_cdc._null_key_error(source_table)) }})
    when {{ seq_expr }} is null or ({{ seq_expr }}.s1 is null and {{ seq_expr }}.s2 is null and {{ seq_expr }}.s3 is null) then raise_error({{ spark_cdc._sql_string(spark_cdc._null_sequence_error(source_table)) }})
    else op
  end as _op,
  after as _after,
  before as _before,
  present_columns as _present,
  {{ spark_cdc._cdc_with_configured_hints('type_hints', 'source_table') }} as _hints,
  commit_ts as _commit_ts,
  cdc_loaded_at as _loaded_at,
  raw_ref as _raw_ref
{%- endmacro %}

{#- WHERE clause of cdc_batch_sql: the operations a target applies (truncates only when applied) and the
    configured cdc_format and source_table. -#}
{% macro _cdc_batch_filter(source_table, cdc_format, apply_truncates=true) -%}
op in ('insert', 'update', 'upsert', 'snapshot', 'delete', {% if apply_truncates %}'truncate', {% endif %}'key_only')
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

{#- The error message for a key_only change (CockroachDB envelope=key_only) reaching a target: names the
    model, the source table and the fix. -#}
{% macro _key_only_error(source_table) -%}
  {{- return("spark_cdc: model '" ~ model['name'] ~ "' received key_only changes" ~ (" for source table '" ~ source_table ~ "'" if source_table else "") ~ ": a CockroachDB changefeed with envelope=key_only carries keys but no column values, so no target can be built from it. Fix: recreate the changefeed with envelope=wrapped (or bare/row) for the tables this model reads, or set this model's source_table to a table whose feed carries values.") -}}
{%- endmacro %}

{#- The error message for a change without a key (other than a truncate) in a target's input: names the
    model, the source table and the fix. -#}
{% macro _null_key_error(source_table) -%}
  {{- return("spark_cdc: model '" ~ model['name'] ~ "' selected a change with a null key" ~ (" for source table '" ~ source_table ~ "'" if source_table else "") ~ ". A change without a key cannot be applied, and dropping it would lose it silently; nothing was written. cdc_changes never has one (staging quarantines them as missing_key), so the model's own SQL produced it. Fix: correct the model's key expression, or filter such rows out explicitly in the model (where key is not null or op = 'truncate').") -}}
{%- endmacro %}

{#- The error message for a change without a seq in a target's input: names the model, the source table
    and the fix. -#}
{% macro _null_sequence_error(source_table) -%}
  {{- return("spark_cdc: model '" ~ model['name'] ~ "' selected a change with a null seq" ~ (" for source table '" ~ source_table ~ "'" if source_table else "") ~ ". A change without a sequence cannot be ordered, and dropping it would lose it silently; nothing was written. cdc_changes never has one (staging quarantines them as missing_sequence), so the model's own SQL produced it. Fix: keep cdc_changes.seq (or build a struct<s1,s2,s3: decimal(38,0)> that orders the table's changes) in the model, or filter such rows out explicitly.") -}}
{%- endmacro %}

{#- SQL expression: the canonical-shaped sequence struct<s1,s2,s3: decimal(38,0)> built from the
    `sequence_by` columns of the model's output, most significant first. Their types are read from
    the input relation: integers and decimal(p,0) as they are, dates as days and timestamps as
    microseconds since the epoch; anything else fails naming the model, the setting and the fix. -#}
{% macro _cdc_sequence_by_expr(input_relation, sequence_by) -%}
  {%- if not execute -%}{{ return('seq') }}{%- endif -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set quoted = [] -%}
  {%- for name in sequence_by -%}{%- do quoted.append(q(name)) -%}{%- endfor -%}
  {%- set described = run_query('describe query select ' ~ (quoted | join(', ')) ~ ' from ' ~ input_relation) -%}
  {%- set parts = [] -%}
  {%- for row in described -%}
    {%- set name = sequence_by[loop.index0] -%}
    {%- set t = row[1] | lower -%}
    {%- if t in ('tinyint', 'smallint', 'int', 'bigint') or (t.startswith('decimal(') and t.endswith(',0)')) -%}
      {%- do parts.append('cast(' ~ q(name) ~ ' as decimal(38,0))') -%}
    {%- elif t == 'date' -%}
      {%- do parts.append('cast(unix_date(' ~ q(name) ~ ') as decimal(38,0))') -%}
    {%- elif t in ('timestamp', 'timestamp_ntz') -%}
      {%- do parts.append('cast(unix_micros(cast(' ~ q(name) ~ ' as timestamp)) as decimal(38,0))') -%}
    {%- else -%}
      {% set msg %}
spark_cdc: sequence_by column '{{ name }}' of model '{{ model['name'] }}' is {{ t }}, which cannot order changes exactly.
Fix: use an integer, decimal(p,0), date or timestamp column (cast it in the model), or remove sequence_by to order by the canonical seq.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
  {%- endfor -%}
  {%- for i in range(parts | length, 3) -%}{%- do parts.append('cast(null as decimal(38,0))') -%}{%- endfor -%}
  {{ return("named_struct('s1', " ~ parts[0] ~ ", 's2', " ~ parts[1] ~ ", 's3', " ~ parts[2] ~ ")") }}
{%- endmacro %}

{#- The error message for two different changes of one key with the same sequence_by value in one run:
    names the model, the columns and the fix. -#}
{% macro _sequence_by_tie_error(source_table, sequence_by) -%}
  {{- return("spark_cdc: model '" ~ model['name'] ~ "' has two different changes of one key with the same sequence_by value (" ~ (sequence_by | join(', ')) ~ ")" ~ (" for source table '" ~ source_table ~ "'" if source_table else "") ~ ": they cannot be ordered, and applying either would silently drop the other; nothing was written. Fix: add a column to sequence_by that tells a key's changes apart (e.g. a commit sequence or event id), or remove sequence_by to order by the canonical seq (where such pairs are quarantined as sequence_conflict).") -}}
{%- endmacro %}

{#- SQL boolean: a change whose `present` (its _present: the columns its image carries, null when it
    carries all) leaves out one of `value_columns` (the target's non-key columns: [{name}]), i.e. a
    partial image. The short cdc_scd1 statement and the start of a cdc_scd2 replay both need images
    without one. -#}
{% macro _cdc_lacks_value_column(present, value_columns) -%}
  {%- set names = [] -%}
  {%- for c in value_columns -%}{%- do names.append(spark_cdc._sql_string(c.name)) -%}{%- endfor -%}
  {%- if names -%}
  ({{ present }} is not null and exists(array({{ names | join(', ') }}), c -> not array_contains({{ present }}, c)))
  {%- else -%}
  false
  {%- endif -%}
{%- endmacro %}
