{#- Body of the cdc_sequence_conflicts model: changes of the canonical stream that share format,
    source table, key and sequence with a *different* change (op, after or before differ). The
    sequence is what orders changes, so such a pair has no defined order: neither may be applied,
    and picking one would be silent data loss. Exact redeliveries (same content) are not conflicts.

    Incremental: a run looks only at the (format, table, key, seq) groups of changes staged since
    the last run, then finds the other members of those groups among all staged changes (a
    semi-join on narrow columns, so a run costs one scan of the key and seq columns plus work in
    proportion to the new changes). Every change of a conflicting group is recorded once (row_kind
    'conflict'), including members staged in earlier runs. Each run that saw new changes appends one
    'checkpoint' row, the watermark of staged changes already checked (a run that finds no conflict
    must still remember how far it has looked). -#}
{% macro sequence_conflicts_sql() -%}
  {{ return(adapter.dispatch('sequence_conflicts_sql', 'spark_cdc')()) }}
{%- endmacro %}

{% macro default__sequence_conflicts_sql() -%}
  {%- set content = "named_struct('op', op, 'after', after, 'before', before)" %}
with staged as (
  {{ spark_cdc.union_staged('change', [
      'cdc_format', 'source_table', 'op', 'key', 'after', 'before', 'seq', 'raw_ref', 'ingested_at',
      'cdc_loaded_at']) }}
),

changes as (
  select s.*, {{ spark_cdc.change_order_key('s.seq') }} as _ord
  from staged as s
  {#- A truncate has no key: it is ordered against the whole table, not against one key's changes. #}
  where s.key is not null
),

{%- if is_incremental() %}

checked as (
  select max(change_loaded_at) as through from {{ this }}
),

new_changes as (
  select c.*
  from changes as c
  cross join checked as w
  where w.through is null or c.cdc_loaded_at > w.through
),

candidates as (
  select c.*
  from changes as c
  left semi join (select distinct cdc_format, source_table, key, _ord from new_changes) as g
    on c.cdc_format <=> g.cdc_format and c.source_table <=> g.source_table and c.key = g.key and c._ord = g._ord
),

{%- else %}

new_changes as (
  select * from changes
),

candidates as (
  select * from changes
),

{%- endif %}

groups as (
  select cdc_format, source_table, key, _ord, count(distinct {{ content }}) as distinct_changes
  from candidates
  group by cdc_format, source_table, key, _ord
  having count(distinct {{ content }}) > 1
),

conflicting as (
  select c.*, g.distinct_changes
  from candidates as c
  join groups as g
    on c.cdc_format <=> g.cdc_format and c.source_table <=> g.source_table and c.key = g.key and c._ord = g._ord
  {%- if is_incremental() %}
  {#- Members recorded by an earlier run (a third change joining a known conflict). #}
  left anti join (select * from {{ this }} where row_kind = 'conflict') as seen
    on c.cdc_format <=> seen.cdc_format and c.source_table <=> seen.source_table and c.key = seen.key
   and c._ord = {{ spark_cdc.change_order_key('seen.seq') }} and c.raw_ref <=> seen.raw_ref
  {%- endif %}
)

select
  'conflict' as row_kind,
  cdc_format,
  source_table,
  key,
  seq,
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

select
  'checkpoint' as row_kind,
  cast(null as string) as cdc_format,
  cast(null as string) as source_table,
  cast(null as string) as key,
  cast(null as struct<s1: decimal(38,0), s2: decimal(38,0), s3: decimal(38,0)>) as seq,
  cast(null as string) as op,
  cast(null as string) as after,
  cast(null as string) as before,
  cast(null as bigint) as distinct_changes,
  cast(null as struct<relation: string, partition: string, order: decimal(38,0), fragment_count: int>) as raw_ref,
  cast(null as timestamp) as ingested_at,
  max(cdc_loaded_at) as change_loaded_at,
  current_timestamp() as cdc_loaded_at
from new_changes
having count(*) > 0
{%- endmacro %}
