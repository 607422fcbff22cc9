{#- No Aurora DSQL chunk reference or unreferenced fragment has waited longer than max_age, and none
    is older than the incomplete_chunk quarantine age without having been quarantined. -#}
{% test cdc_pending_chunks_age(model, max_age=none) %}
  {{ return(adapter.dispatch('test_cdc_pending_chunks_age', 'spark_cdc')(model, max_age)) }}
{% endtest %}

{% macro default__test_cdc_pending_chunks_age(model, max_age=none) %}
  {%- set context = spark_cdc._cdc_freshness_test_context('cdc_pending_chunks_age', model) -%}
  {%- set setting = spark_cdc.format_config('aurora_dsql').get('incomplete_chunk_max_age_hours') -%}
  {%- set quarantine_s = ((setting | float(24)) * 3600) | int -%}
  {%- set max_age = spark_cdc.get_config()['contracts'].get('pending_chunk_max_age') if max_age is none else max_age -%}
  {%- set fix = "give max_age (or var('spark_cdc').contracts.pending_chunk_max_age) as {count: 6, period: hour}, or leave it none for incomplete_chunk_max_age_hours." -%}
  {%- set max_age_s = spark_cdc._cdc_freshness_duration_seconds(max_age, context, 'max_age', fix) -%}
  {%- set max_age_text = (max_age['count'] ~ ' ' ~ max_age['period']) if max_age_s is not none else (setting ~ ' hour (incomplete_chunk_max_age_hours)') -%}
  {%- set max_age_s = quarantine_s if max_age_s is none else max_age_s -%}
  {%- set ref_type = 'struct<chunk_id: string, total_fragments: int, crc32c: bigint>' -%}
  {%- set same_ref -%}
t.raw_ref.relation <=> b.raw_ref.relation and t.raw_ref.partition <=> b.raw_ref.partition and t.raw_ref.order <=> b.raw_ref.order
  {%- endset %}
  {#- The reassembly's own inputs: the view leaves out what is older than the quarantine age (it
      counts as quarantined), so what reassembly has not quarantined yet is looked up here. #}
  {%- set staged = ref('stg_cdc__aurora_dsql') -%}
  {%- set emitted = ref('stg_cdc__aurora_dsql_reassembled') -%}

with clock as (
  select
    timestampadd(SECOND, -{{ max_age_s }}, current_timestamp()) as max_age_cutoff,
    timestampadd(SECOND, -{{ quarantine_s }}, current_timestamp()) as quarantine_cutoff
),

buffered as (
  select * from {{ staged }} where reason_code in ('chunked_buffered', 'fragment_buffered')
),

fragments as (
  select key as chunk_id, cast(seq.s1 as int) as fragment_index, raw_ref,
         coalesce(ingested_at, cdc_loaded_at) as landed_at
  from buffered
  where reason_code = 'fragment_buffered'
),

received as (
  select chunk_id, count(distinct fragment_index) as fragments_received
  from fragments
  group by chunk_id
),

{#- Shown by the view: still waiting, younger than the quarantine age. #}
waiting as (
  select
    p.source_table, p.chunk_id, p.image, p.main_record_received, p.total_fragments, p.fragments_received,
    case when p.main_record_received then p.main_record_at else p.last_fragment_at end as waiting_since,
    p.raw_ref
  from {{ model }} as p
  cross join clock as c
  where case when p.main_record_received then p.main_record_at else p.last_fragment_at end >= c.quarantine_cutoff
),

{#- Chunked records older than the quarantine age that the reassembly has neither emitted nor
    quarantined. #}
overdue_records as (
  select
    b.source_table,
    from_json(h.ref, {{ spark_cdc._sql_string(ref_type) }}) as ref,
    h.image,
    coalesce(b.ingested_at, b.cdc_loaded_at) as waiting_since,
    b.raw_ref
  from buffered as b
  left anti join {{ emitted }} as t on {{ same_ref }} and t.seq <=> b.seq
  lateral view explode(b.type_hints) h as image, ref
  where b.reason_code = 'chunked_buffered'
),

referenced as (
  select distinct from_json(h.ref, {{ spark_cdc._sql_string(ref_type) }}).chunk_id as chunk_id
  from buffered as b
  lateral view explode(b.type_hints) h as image, ref
  where b.reason_code = 'chunked_buffered'
),

{#- Unreferenced fragments are quarantined once per chunk_id, the row pointing at one fragment. #}
quarantined_chunks as (
  select distinct b.chunk_id
  from fragments as b
  inner join {{ emitted }} as t on {{ same_ref }}
  where t.reason_code = 'incomplete_chunk' and t.seq is null
),

overdue_orphans as (
  select
    f.chunk_id,
    count(distinct f.fragment_index) as fragments_received,
    max(f.landed_at) as waiting_since,
    min_by(f.raw_ref, struct(f.raw_ref.partition, f.raw_ref.order)) as raw_ref
  from fragments as f
  left anti join referenced as r on r.chunk_id = f.chunk_id
  left anti join quarantined_chunks as d on d.chunk_id = f.chunk_id
  group by f.chunk_id
),

overdue as (
  select
    o.source_table, o.ref.chunk_id as chunk_id, o.image, true as main_record_received,
    o.ref.total_fragments as total_fragments, coalesce(r.fragments_received, 0) as fragments_received,
    o.waiting_since, o.raw_ref
  from overdue_records as o
  left join received as r on r.chunk_id = o.ref.chunk_id
  union all
  select
    cast(null as string) as source_table, chunk_id, cast(null as string) as image, false as main_record_received,
    cast(null as int) as total_fragments, fragments_received, waiting_since, raw_ref
  from overdue_orphans
),

judged as (
  select w.*, false as quarantine_overdue from waiting as w
  union all
  select o.*, true as quarantine_overdue
  from overdue as o
  cross join clock as c
  where o.waiting_since < c.quarantine_cutoff
)

select
  j.source_table,
  j.chunk_id,
  j.image,
  j.main_record_received,
  j.total_fragments,
  j.fragments_received,
  j.waiting_since,
  cast(unix_seconds(current_timestamp()) - unix_seconds(j.waiting_since) as bigint) as waiting_seconds,
  {{ max_age_s }} as max_age_seconds,
  case when j.quarantine_overdue then 'quarantine_overdue' else 'waiting_too_long' end as failure,
  concat(
    case when j.main_record_received
         then concat(j.image, ' chunk_id ', substr(j.chunk_id, 1, 100), ' of a chunked ', coalesce(j.source_table, '?'), ' record: ',
                     j.fragments_received, ' of ', j.total_fragments, ' fragments')
         else concat('chunk_id ', substr(j.chunk_id, 1, 100), ' referenced by no chunked record: ', j.fragments_received, ' fragment(s)') end,
    ', waiting since ', j.waiting_since,
    case when j.quarantine_overdue
         then ', older than incomplete_chunk_max_age_hours ({{ setting }} h) yet neither emitted nor quarantined by stg_cdc__aurora_dsql_reassembled: reassembly/quarantine did not run since (run stg_cdc__aurora_dsql_reassembled)'
         else ', longer than max_age {{ max_age_text }}; quarantined incomplete_chunk after {{ setting }} h' end
  ) as failure_detail,
  j.raw_ref
from judged as j
cross join clock as c
where j.waiting_since < c.max_age_cutoff
{% endmacro %}
