{#- Body of the cdc_sequence_conflicts model: changes of the canonical stream that share format,
    source table, key and sequence with a change of a *different effect*. The sequence is what orders
    changes, so such a pair has no defined order: neither may be applied, and picking one would be
    silent data loss.

    Two changes have the same effect when they upsert the same image (insert, update, upsert and
    snapshot are one class; the image is compared as a JSON object, so key order and spacing do not
    matter) or both delete. The before image is not compared: apply never reads it to decide a
    row's state, and connectors send it or not by option (CockroachDB `diff`, Debezium REPLICA
    IDENTITY), so one change delivered under two configurations is a redelivery, not a conflict.

    A sequence taken from the landing order (the fallback of formats whose messages carry no source
    sequence: YDB without virtual timestamps, CockroachDB without `updated`, Qlik full-load rows,
    Debezium without an LSN) orders changes only within one raw partition; offsets of two partitions
    are not comparable, so such changes are only compared within their partition (`order_scope`).

    Incremental: a run looks only at the groups of changes staged since the last run, then finds the
    other members of those groups among all staged changes (a semi-join on narrow columns, so a run
    costs one scan of the key and seq columns plus work in proportion to the new changes; when no
    new change shares its group with another, which a narrow query finds first, no image is read
    at all). Three small queries before the run (`_sequence_conflicts_probe`) make that cheap on a
    long history: the watermark becomes a literal, so Spark pushes it into the parquet reader and
    skips the row groups of earlier runs when it collects the new changes, and a batch of at most
    `_sequence_broadcast_limit()` new changes has its groups broadcast to the semi-join instead of
    both sides being shuffled (measured on 2,000,000 staged changes and 1,000 new ones: the narrow
    query 3.3 s -> 1.0 s). Every
    change of a conflicting group is recorded once (row_kind 'conflict'), including members staged
    in earlier runs. Each run that saw new changes appends one 'checkpoint' row, the watermark of
    staged changes already checked (a run that finds no conflict must still remember how far it has
    looked). -#}
{% macro sequence_conflicts_sql() -%}
  {{ return(adapter.dispatch('sequence_conflicts_sql', 'spark_cdc')()) }}
{%- endmacro %}

{% macro default__sequence_conflicts_sql() -%}
  {%- set effect_class = spark_cdc._change_effect('op') %}
  {#- Cheap first pass on the image text; the JSON comparison runs only for groups it flags. The
      text is compared by its SHA-256 (min != max: more than one distinct text), so the
      aggregation shuffles a 64-character digest per change, not the image, and needs no
      count(distinct) (which Spark runs as two aggregations over an expanded input): a first run
      over 10,000,000 staged changes took 59.8-63.4 s against 76.4 s (`make bench`, same day and
      machine; the steps below also read the flagged members once, not twice). The effect is
      length-prefixed, so no (effect, image) pair can be spelled like another; a null image is
      told from an empty one by counting nulls. Message content can choose its text, but not a
      SHA-256 collision. #}
  {%- set text_digest = "sha2(concat(coalesce(length(_effect), -1), ':', coalesce(_effect, ''), coalesce(after, '')), 256)" %}
  {#- The image as canonical JSON (VARIANT's text: keys sorted, compact, numbers by value), so
      member order and spacing do not matter but a member's JSON type does ("118" is not 118). #}
  {%- set content = "named_struct('op', _effect, 'after', coalesce(" ~ spark_cdc._cdc_canonical_json('after') ~ ", after))" %}
  {%- set group_on = "c.cdc_format <=> g.cdc_format and c.source_table <=> g.source_table and c.key = g.key and c._ord = g._ord and c._scope <=> g._scope" %}
  {%- set probe = spark_cdc._sequence_conflicts_probe(group_on) if is_incremental() and execute else {} %}
  {#- The row a run that saw new changes appends: how far it has looked (none when it saw none). #}
  {%- set checkpoint -%}
select
  'checkpoint' as row_kind,
  cast(null as string) as cdc_format,
  cast(null as string) as source_table,
  cast(null as string) as key,
  cast(null as struct<s1: decimal(38,0), s2: decimal(38,0), s3: decimal(38,0)>) as seq,
  cast(null as string) as order_scope,
  cast(null as string) as op,
  cast(null as string) as after,
  cast(null as string) as before,
  cast(null as bigint) as distinct_changes,
  cast(null as struct<relation: string, `partition`: string, `order`: decimal(38,0), fragment_count: int>) as raw_ref,
  cast(null as timestamp) as ingested_at,
  max(cdc_loaded_at) as change_loaded_at,
  current_timestamp() as cdc_loaded_at
from new_changes
having count(*) > 0
  {%- endset %}
  {%- if probe.get('shared') == 0 %}
{#- No new change shares its group with another staged change (or there is no new change), so none
    can conflict: only the checkpoint, from the narrow columns. The whole statement below appends
    the same rows, but Spark first compiles every step of it for an empty input: in the test suite
    (2026-11-27, a handful of changes per run) its insert took 2.0 s a run on average, the
    checkpoint alone 0.3-1.0 s. -#}
with new_changes as (
  {{ spark_cdc._sequence_new_changes(probe['since']) }}
)

{{ checkpoint }}
  {%- else %}
with staged as (
  {{ spark_cdc.union_staged('change', [
      'cdc_format', 'source_table', 'op', 'key', 'after', 'before', 'seq', 'raw_ref', 'ingested_at',
      'cdc_loaded_at']) }}
),

changes as (
  select
    s.*,
    {{ spark_cdc.change_order_key('s.seq') }} as _ord,
    {{ spark_cdc._sequence_order_scope('s.seq', 's.raw_ref') }} as _scope,
    {{ effect_class }} as _effect
  from staged as s
  {#- A truncate has no key: it is ordered against the whole table, not against one key's changes. #}
  where s.key is not null
),

{%- if is_incremental() %}

new_changes as (
  select c.*
  from changes as c
  where {{ probe.get('since', 'true') }}
),

candidates as (
  select {% if probe.get('broadcast') %}/*+ broadcast(g) */ {% endif %}c.*
  from changes as c
  inner join (select distinct cdc_format, source_table, key, _ord, _scope from new_changes) as g
    on {{ group_on }}
),

{%- else %}

new_changes as (
  select * from changes
),

candidates as (
  select * from changes
),

{%- endif %}

{#- Each step keeps the changes of some groups with an inner join on a distinct list of them (one
    match at most per change), not a semi-join: Spark pushes a semi-join into every branch of the
    staged union, and one whose other side is that union again into every branch of that, so the
    plan grew with the product of the branches (a build of five formats ran out of memory
    optimising it). #}
{#- Only a group of more than one change can hold two different ones. Counted first, on the narrow
    columns: count(*) aggregates by hashing, while the digest's min and max (text, no fixed-width
    buffer) make Spark sort every change by group (30% of a first run's profile samples over
    2,000,000 changes). Groups of one, nearly all of them, are neither digested nor sorted. #}
shared_groups as (
  select cdc_format, source_table, key, _ord, _scope
  from candidates
  group by cdc_format, source_table, key, _ord, _scope
  having count(*) > 1
),

shared as (
  select c.*
  from candidates as c
  inner join shared_groups as g
    on {{ group_on }}
),

text_groups as (
  select cdc_format, source_table, key, _ord, _scope
  from (select cdc_format, source_table, key, _ord, _scope, after, {{ text_digest }} as _digest from shared) as c
  group by cdc_format, source_table, key, _ord, _scope
  having min(_digest) != max(_digest) or count_if(after is null) not in (0, count(*))
),

{#- The members of flagged groups: few, and read by both steps below. #}
flagged as (
  select c.*
  from candidates as c
  inner join text_groups as g
    on {{ group_on }}
),

groups as (
  select c.cdc_format, c.source_table, c.key, c._ord, c._scope, count(distinct {{ content }}) as distinct_changes
  from flagged as c
  group by c.cdc_format, c.source_table, c.key, c._ord, c._scope
  having count(distinct {{ content }}) > 1
),

conflicting as (
  select c.*, g.distinct_changes
  from flagged as c
  inner join groups as g
    on {{ group_on }}
  {%- if is_incremental() %}
  {#- Members recorded by an earlier run (a third change joining a known conflict). #}
  left anti join (select * from {{ this }} where row_kind = 'conflict') as seen
    on c.cdc_format <=> seen.cdc_format and c.source_table <=> seen.source_table and c.key = seen.key
   and c._ord = {{ spark_cdc.change_order_key('seen.seq') }} and c._scope <=> seen.order_scope
   and c.raw_ref <=> seen.raw_ref
  {%- endif %}
)

select
  'conflict' as row_kind,
  cdc_format,
  source_table,
  key,
  seq,
  _scope as order_scope,
  op,
  after,
  before,
  distinct_changes,
  raw_ref,
  ingested_at,
  cdc_loaded_at as change_loaded_at,
  current_timestamp() as cdc_loaded_at
from conflicting

union all

{{ checkpoint }}
  {%- endif %}
{%- endmacro %}


{#- What the incremental run needs to know before it is written, from three small queries:
    - since: the predicate of changes staged after the watermark (the latest change already
      checked, a timestamp this model wrote), with the watermark inlined as a literal so the
      parquet reader skips the row groups of earlier runs; 'true' on a first incremental run;
    - broadcast: whether the new changes are few enough (at most _sequence_broadcast_limit()) to
      broadcast their groups to the semi-join, instead of shuffling every staged change's narrow
      columns (their count comes first; none: no narrow query at all);
    - shared: how many groups of the new changes have more than one member among all staged
      changes, from a scan of the narrow columns only. When none has, the run reads no image (a
      conflict needs two members). -#}
{% macro _sequence_conflicts_probe(group_on) -%}
  {%- set through = run_query('select cast(max(change_loaded_at) as string) from ' ~ this)[0][0] -%}
  {%- set since = 'cdc_loaded_at > timestamp ' ~ spark_cdc._sql_string(through) if through else 'true' -%}
  {%- set new = run_query('select count(*) from (' ~ spark_cdc._sequence_new_changes(since) ~ ') as n')[0][0] | int -%}
  {%- set broadcast = new <= spark_cdc._sequence_broadcast_limit() -%}
  {%- if new == 0 -%}
    {{ return({'since': since, 'broadcast': broadcast, 'shared': 0}) }}
  {%- endif -%}
  {%- set shared_sql -%}
with changes as (
  select
    s.cdc_format,
    s.source_table,
    s.key,
    s.cdc_loaded_at,
    {{ spark_cdc.change_order_key('s.seq') }} as _ord,
    {{ spark_cdc._sequence_order_scope('s.seq', 's.raw_ref') }} as _scope
  from (
    {{ spark_cdc.union_staged('change', ['cdc_format', 'source_table', 'key', 'seq', 'raw_ref', 'cdc_loaded_at']) }}
  ) as s
  where s.key is not null
),

new_groups as (
  select distinct cdc_format, source_table, key, _ord, _scope
  from changes
  where {{ since }}
)

select count(*) from (
  select {% if broadcast %}/*+ broadcast(g) */ {% endif %}c.key
  from changes as c
  inner join new_groups as g
    on {{ group_on }}
  group by c.cdc_format, c.source_table, c.key, c._ord, c._scope
  having count(*) > 1
) as shared
  {%- endset -%}
  {{ return({'since': since, 'broadcast': broadcast, 'shared': run_query(shared_sql)[0][0] | int}) }}
{%- endmacro %}

{#- The load times of the keyed changes staged since the watermark (`since`, a predicate from
    _sequence_conflicts_probe), from the narrow columns: what the probe counts, and all a run reads
    when nothing can conflict (its checkpoint). -#}
{% macro _sequence_new_changes(since) -%}
select s.cdc_loaded_at
from (
  {{ spark_cdc.union_staged('change', ['key', 'cdc_loaded_at']) }}
) as s
where s.key is not null and {{ since }}
{%- endmacro %}

{#- The most new changes whose groups the incremental run broadcasts (a hash table of narrow rows,
    about 30 MB at this size, well within the driver memory the package configures); a larger batch
    is joined by a shuffle of both sides. -#}
{% macro _sequence_broadcast_limit() -%}
  {{ return(250000) }}
{%- endmacro %}


{#- SQL expression: the raw relation and group (["<relation>","<partition>"]) when a change's `seq`
    was taken from the landing order (it holds the raw order value and no source sequence beside
    it), else null. Such a sequence orders changes only within one group of one raw relation. -#}
{% macro _sequence_order_scope(seq_expr, raw_ref_expr) -%}
  case when {{ seq_expr }}.s3 = {{ raw_ref_expr }}.order
         or ({{ seq_expr }}.s1 = {{ raw_ref_expr }}.order and {{ seq_expr }}.s2 is null)
       then to_json(array({{ raw_ref_expr }}.relation, {{ raw_ref_expr }}.partition)) end
{%- endmacro %}

{#- SQL expression: what a change does to its key, the class two deliveries of one key and seq are
    compared by: 'upsert' (insert, update, upsert, snapshot), else the op itself (delete, truncate,
    key_only). -#}
{% macro _change_effect(op_expr) -%}
  case when {{ op_expr }} in ('insert', 'update', 'upsert', 'snapshot') then 'upsert' else {{ op_expr }} end
{%- endmacro %}
