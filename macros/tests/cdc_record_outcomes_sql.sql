{#- One row per raw record landed in `format`'s raw relation, saying what became of it: the SQL that
    cdc_accounting (the ledger) aggregates and test cdc_records_accounted filters. A raw record is
    matched to its staged row by lineage (raw_ref relation, partition and order; by its relation and
    text when it has no order value), then followed down the chain: sequence conflicts, Qlik retries, DSQL reassembly
    and pending chunks. Columns: cdc_format, raw_relation, raw_partition, raw_order, raw_excerpt,
    outcome, reason_code, lost_at. -#}
{% macro cdc_record_outcomes_sql(format) -%}
  {{ return(adapter.dispatch('cdc_record_outcomes_sql', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__cdc_record_outcomes_sql(format) -%}
  {%- set models = spark_cdc.format_staging_models(format) -%}
  {#- A raw record is matched by its position and content digest: m_partition is the relation and
      the group within it (_cdc_position_group), m_order its order. A null order value cannot be
      watermarked: staging recognises such a row by its relation and digest alone (whatever its
      partition), and so does this match. -#}
  {%- set match_cols = ['m_partition', 'm_order', 'm_digest'] -%}
select
  {{ spark_cdc._sql_string(format) }} as cdc_format,
  l.raw_relation,
  l.raw_partition,
  l.raw_order,
  substr(l.raw_value, 1, 120) as raw_excerpt,
  o.outcome,
  o.reason_code,
  o.lost_at
from (
  select
    x.*,
    row_number() over (partition by m_partition, m_order, m_digest order by m_digest) as nth
  from (
    select
      r.raw_value, r.raw_key, r.raw_order, r.raw_partition, r.raw_relation,
      case when r.raw_order is not null then {{ spark_cdc._cdc_position_group('r.raw_relation', 'r.raw_partition') }}
           else {{ spark_cdc._cdc_position_group('r.raw_relation') }} end as m_partition,
      r.raw_order as m_order,
      r.raw_digest as m_digest
    from ({{ spark_cdc.raw_messages(format, deliveries=false, checked=false) }}) as r
  ) as x
) as l
left join (
  {#- The staged rows of one raw position and content, each with its outcome (staging records every
      delivery: a second one as `duplicate`, another content as `position_reused`). #}
  select {{ match_cols | join(', ') }}, count(*) as staged_rows,
         array_sort(collect_list(named_struct('outcome', outcome, 'reason_code', reason_code, 'lost_at', lost_at))) as outcomes
  from ({{ spark_cdc._cdc_staged_outcomes(format, models) }}) as so
  group by {{ match_cols | join(', ') }}
) as k
  on {% for c in match_cols %}k.{{ c }} <=> l.{{ c }}{{ ' and ' if not loop.last }}{% endfor %}
left join (
  select raw_ref.relation as wm_relation, raw_ref.partition as wm_partition, max(raw_ref.order) as wm_order
  from {{ ref(models[0]) }}
  group by raw_ref.relation, raw_ref.partition
) as w
  on w.wm_relation = l.raw_relation and w.wm_partition <=> l.raw_partition
lateral view inline(array(
  case
    when k.staged_rows >= l.nth then element_at(k.outcomes, cast(l.nth as int))
    {#- A record without an order value is staged once by its content; another copy is a duplicate. #}
    when l.raw_order is null and k.staged_rows > 0
      then named_struct('outcome', 'duplicate', 'reason_code', 'duplicate', 'lost_at', cast(null as string))
    {#- Above the partition's watermark (or without an order value and not staged by its content):
        staging has not reached it yet. At or below it, staging records every delivery, so a raw row
        it has not (a copy it did not count, or another content at a staged position) is lost. #}
    when l.raw_order is null or w.wm_order is null or l.raw_order > w.wm_order
      then named_struct('outcome', 'unstaged', 'reason_code', cast(null as string), 'lost_at', 'watermark')
    else named_struct('outcome', 'unaccounted', 'reason_code', cast(null as string), 'lost_at', 'staging')
  end)) o as outcome, reason_code, lost_at
{%- endmacro %}

{#- The rows of stg_cdc__<format> (keyed like raw rows: m_partition, m_order, m_digest) with
    their outcome, followed through the format's other staging models and cdc_sequence_conflicts. -#}
{% macro _cdc_staged_outcomes(format, models) -%}
  {%- set extra = models[1:] -%}
  {%- set dsql = 'stg_cdc__aurora_dsql_reassembled' in extra -%}
  {%- set qlik = 'stg_cdc__qlik_replicate_retried' in extra -%}
  {%- set buffered_codes = "('chunked_buffered', 'fragment_buffered')" -%}
with staged as (
  {{ spark_cdc._cdc_rows_with_conflicts(ref(models[0]), "coalesce(e.reason_code, '') not in " ~ buffered_codes if dsql else none) }}
)
{%- if qlik %},

{#- A data message quarantined missing_metadata and staged again once its metadata arrived. #}
retried as (
  select p, o, raw_digest, min(named_struct('status', status, 'reason_code', reason_code)) as outcome
  from ({{ spark_cdc._cdc_rows_with_conflicts(ref('stg_cdc__qlik_replicate_retried'), none) }}) as r
  group by p, o, raw_digest
)
{%- endif %}
{%- if dsql %},

{#- Chunked records emitted by reassembly (a change or a quarantine), keyed by their main record;
    fragments no record references are quarantined keyed by the first of them (seq null). #}
reassembled as (
  select p, o, seq, min(named_struct('status', status, 'reason_code', reason_code)) as outcome
  from ({{ spark_cdc._cdc_rows_with_conflicts(ref('stg_cdc__aurora_dsql_reassembled'), none) }}) as r
  group by p, o, seq
),

{#- Buffered rows, one per chunk reference (a main record has one per chunked image), with what
    reassembly made of the main record or of the fragment. #}
facts as (
  select b.p, b.rel, b.o, b.seq, b.raw_digest, b.reason_code as kind, r.outcome as fate, f.pos, f.fact.chunk_id,
         f.fact.total_fragments as total
  from (
    select {{ spark_cdc._cdc_position_group('raw_ref.relation', 'raw_ref.partition') }} as p,
           {{ spark_cdc._cdc_position_group('raw_ref.relation') }} as rel,
           raw_ref.order as o, seq, key, raw_digest, reason_code, type_hints
    from {{ ref(models[0]) }}
    where reason_code in {{ buffered_codes }}
  ) as b
  left join reassembled as r
    on r.p <=> b.p and r.o <=> b.o
   and ((b.reason_code = 'chunked_buffered' and r.seq <=> b.seq)
        or (b.reason_code = 'fragment_buffered' and r.seq is null and r.outcome.reason_code = 'incomplete_chunk'))
  lateral view posexplode(
    case when b.reason_code = 'chunked_buffered'
      then transform(map_values(b.type_hints), v -> from_json(v, 'struct<chunk_id: string, total_fragments: int>'))
      else array(named_struct('chunk_id', b.key, 'total_fragments', cast(null as int)))
    end) f as pos, fact
),

{#- What stg_cdc__aurora_dsql_pending_chunks lists, decided here without its cost (it reassembles
    the text): a main record not emitted is pending while one of its images lacks a fragment
    (distinct indexes below its total); fragments are pending while their chunk has no main
    record, or a pending one. #}
by_chunk as (
  select x.*,
    collect_set(case when kind = 'fragment_buffered' then seq.s1 end) over (partition by chunk_id) as indexes,
    bool_or(kind = 'chunked_buffered' and fate is not null) over (partition by chunk_id) as chunk_emitted,
    bool_or(kind = 'fragment_buffered' and fate is not null) over (partition by chunk_id) as chunk_quarantined,
    bool_or(kind = 'chunked_buffered') over (partition by chunk_id) as chunk_has_main
  from facts as x
),

by_main as (
  select y.*,
    bool_and(coalesce(size(filter(indexes, i -> i < total)) >= total, true)) over (partition by p, o, seq, kind) as main_complete
  from by_chunk as y
),

buffered as (
  select z.*,
    bool_or(kind = 'chunked_buffered' and fate is null and not main_complete) over (partition by chunk_id) as chunk_waits
  from by_main as z
)
{%- endif %}

select
  case when s.o is not null then s.p else s.rel end as m_partition,
  s.o as m_order,
  s.raw_digest as m_digest,
  {%- if qlik %}
  case when rt.outcome is not null then rt.outcome.status else s.status end as outcome,
  case when rt.outcome is not null then rt.outcome.reason_code else s.reason_code end as reason_code,
  {%- else %}
  s.status as outcome,
  s.reason_code,
  {%- endif %}
  cast(null as string) as lost_at
from staged as s
{%- if qlik %}
left join retried as rt
  on s.status = 'quarantined' and s.reason_code = 'missing_metadata'
 and rt.p <=> s.p and rt.o <=> s.o and rt.raw_digest <=> s.raw_digest
{%- endif %}
{%- if dsql %}
union all
select
  case when o is not null then p else rel end as m_partition,
  o as m_order,
  raw_digest as m_digest,
  v.outcome,
  v.reason_code,
  v.lost_at
from buffered
lateral view inline(array(
  case
    when kind = 'chunked_buffered' and fate is not null
      then named_struct('outcome', fate.status, 'reason_code', fate.reason_code, 'lost_at', cast(null as string))
    when kind = 'chunked_buffered' and not main_complete
      then named_struct('outcome', 'pending', 'reason_code', kind, 'lost_at', cast(null as string))
    when kind = 'chunked_buffered'
      then named_struct('outcome', 'unaccounted', 'reason_code', cast(null as string), 'lost_at', 'reassembly')
    when chunk_emitted
      then named_struct('outcome', 'consumed', 'reason_code', kind, 'lost_at', cast(null as string))
    when chunk_quarantined
      then named_struct('outcome', 'quarantined', 'reason_code', 'incomplete_chunk', 'lost_at', cast(null as string))
    when chunk_waits or not chunk_has_main
      then named_struct('outcome', 'pending', 'reason_code', kind, 'lost_at', cast(null as string))
    else named_struct('outcome', 'unaccounted', 'reason_code', cast(null as string), 'lost_at', 'reassembly')
  end)) v as outcome, reason_code, lost_at
{#- A main record is one row per chunked image here: counted once. #}
where pos = 0
{%- endif %}
{%- endmacro %}

{#- SELECT over one staging model (shaped like stg_cdc__debezium): raw position (p: relation and
    group, rel: relation, o: order), raw_digest, seq and the outcome of each row: its record_status
    and reason_code, except that a change in a sequence conflict is quarantined sequence_conflict
    (the match cdc_changes makes) and a counted redelivery is a `duplicate`. -#}
{% macro _cdc_rows_with_conflicts(relation, where) -%}
  select
    {{ spark_cdc._cdc_position_group('e.raw_ref.relation', 'e.raw_ref.partition') }} as p,
    {{ spark_cdc._cdc_position_group('e.raw_ref.relation') }} as rel,
    e.raw_ref.order as o,
    e.raw_digest,
    e.seq,
    case when c._ord is not null then 'quarantined' when e.reason_code = 'duplicate' then 'duplicate' else e.record_status end as status,
    case when c._ord is not null then 'sequence_conflict' else e.reason_code end as reason_code
  from {{ relation }} as e
  left join (
    select distinct cdc_format, source_table, key, {{ spark_cdc.change_order_key('seq') }} as _ord, order_scope
    from {{ ref('cdc_sequence_conflicts') }}
    where row_kind = 'conflict'
  ) as c
    on e.record_status = 'change'
   and e.cdc_format <=> c.cdc_format and e.source_table <=> c.source_table and e.key = c.key
   and {{ spark_cdc.change_order_key('e.seq') }} = c._ord
   and {{ spark_cdc._sequence_order_scope('e.seq', 'e.raw_ref') }} <=> c.order_scope
  {%- if where %}
  where {{ where }}
  {%- endif %}
{%- endmacro %}

{#- SQL: a record's place in the ledger's match: its relation and group as one text (its relation
    alone when `partition_expr` is not given, for records matched by their text). -#}
{% macro _cdc_position_group(relation_expr, partition_expr=none) -%}
  {%- if partition_expr is none -%}
  to_json(array({{ relation_expr }}))
  {%- else -%}
  to_json(array({{ relation_expr }}, {{ partition_expr }}))
  {%- endif -%}
{%- endmacro %}
