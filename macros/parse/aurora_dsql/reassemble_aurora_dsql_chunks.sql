{#- The body of the DSQL reassembly model (mode 'emit') or of the pending-chunks view (mode
    'pending'). `staged` is stg_cdc__aurora_dsql; `emitted` is the reassembly model's own relation
    (none on its first build). Chunked records not yet emitted are matched with their buffered
    fragments (de-duplicated by chunk_id and index); a record whose images are all complete is
    checked (fragment_conflict, crc_mismatch) and emitted once, shaped like the staging models, with
    raw_ref pointing at the chunked main record and fragment_count = fragments + 1. Incomplete records
    wait, and are quarantined incomplete_chunk once older than incomplete_chunk_max_age_hours, as are
    fragments no chunked record references. -#}
{% macro reassemble_aurora_dsql_chunks(staged, emitted, mode='emit') -%}
  {{ return(adapter.dispatch('reassemble_aurora_dsql_chunks', 'spark_cdc')(staged, emitted, mode)) }}
{%- endmacro %}

{% macro default__reassemble_aurora_dsql_chunks(staged, emitted, mode='emit') -%}
  {%- set setting = spark_cdc.format_config('aurora_dsql').get('incomplete_chunk_max_age_hours') -%}
  {%- set max_age = setting | float(-1) if setting is not none and setting is not boolean else -1 -%}
  {%- if max_age < 0 -%}
    {% set msg %}
spark_cdc: model '{{ model.name }}': var('spark_cdc').formats.aurora_dsql.incomplete_chunk_max_age_hours must be a number of hours >= 0; got '{{ setting }}'.
Fix: set it in dbt_project.yml (the default is 24) to how long a chunked DSQL record may wait for its fragments.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set cutoff = 'timestampadd(SECOND, -' ~ ((max_age * 3600) | int) ~ ', current_timestamp())' -%}
  {%- set ref_type = 'struct<chunk_id: string, total_fragments: int, crc32c: bigint>' -%}
  {%- set same_ref -%}
t.raw_ref.relation <=> b.raw_ref.relation and t.raw_ref.partition <=> b.raw_ref.partition and t.raw_ref.order <=> b.raw_ref.order
  {%- endset %}
with {{ spark_cdc._aurora_dsql_chunk_buffer(staged, emitted, same_ref, ref_type) }},

{{ spark_cdc._aurora_dsql_chunk_status(mode, cutoff, max_age) }},

{{ spark_cdc._aurora_dsql_orphan_fragments(emitted, same_ref, ref_type) }}
{%- if mode == 'pending' %}

{{ spark_cdc._aurora_dsql_pending_rows(cutoff) }}
{%- else %},

{{ spark_cdc._aurora_dsql_reassembled_rows() }}
union all
{{ spark_cdc._aurora_dsql_orphan_rows(cutoff, max_age) }}
{%- endif %}
{%- endmacro %}

{#- Reassembly step: the CTEs buffered (the buffered rows of `staged`), mains (chunked records not yet
    emitted to `emitted`, numbered), fragments, slots (one per chunk_id and index) and refs (one per
    chunked image). `same_ref`: SQL matching t.raw_ref with b.raw_ref; `ref_type`: a chunk
    reference's struct type. -#}
{% macro _aurora_dsql_chunk_buffer(staged, emitted, same_ref, ref_type) -%}
buffered as (
  select * from {{ staged }} where reason_code in ('chunked_buffered', 'fragment_buffered')
),

mains as (
  select b.*, row_number() over (order by b.raw_ref.partition, b.raw_ref.order, b.seq) as main_no
  from buffered as b
  {%- if emitted is not none %}
  left anti join {{ emitted }} as t on {{ same_ref }} and t.seq <=> b.seq
  {%- endif %}
  where b.reason_code = 'chunked_buffered'
),

fragments as (
  select key as chunk_id, cast(seq.s1 as int) as fragment_index, after as data, raw_ref, ingested_at,
         coalesce(ingested_at, cdc_loaded_at) as landed_at
  from buffered
  where reason_code = 'fragment_buffered'
),

{#- One slot per (chunk_id, index): redeliveries with the same data count once; different data is
    a conflict. #}
slots as (
  select chunk_id, fragment_index, count(distinct data) as variants, min(data) as data,
         max(ingested_at) as ingested_at, max(landed_at) as landed_at
  from fragments
  group by chunk_id, fragment_index
),

refs as (
  select m.main_no, h.image, from_json(h.ref, {{ spark_cdc._sql_string(ref_type) }}) as ref
  from mains as m
  lateral view explode(m.type_hints) h as image, ref
)
{%- endmacro %}

{#- Reassembly step: the CTEs images (each chunked image's fragments, concatenated in index order),
    checked (complete, and its checksum unless `mode` is 'pending'), described, status (per chunked
    record) and judged (the record's chunk_reason: fragment_conflict, incomplete_chunk once older than
    `cutoff` (`max_age` hours), pending, crc_mismatch). -#}
{% macro _aurora_dsql_chunk_status(mode, cutoff, max_age) -%}
images as (
  select
    r.main_no,
    r.image,
    max(r.ref.chunk_id) as chunk_id,
    max(r.ref.total_fragments) as total,
    max(r.ref.crc32c) as crc32c,
    count(s.fragment_index) as received,
    coalesce(max(s.variants), 0) > 1 as conflict,
    min(case when s.variants > 1 then s.fragment_index end) as conflict_index,
    concat_ws('', transform(array_sort(collect_list(struct(s.fragment_index as i, s.data as d))), x -> x.d)) as text,
    max(s.ingested_at) as ingested_at,
    min(s.landed_at) as first_landed_at,
    max(s.landed_at) as last_landed_at
  from refs as r
  left join slots as s on s.chunk_id = r.ref.chunk_id and s.fragment_index < r.ref.total_fragments
  group by r.main_no, r.image
),

checked as (
  select
    i.*,
    i.received = i.total as complete,
    {#- A view cannot call the session's (temporary) UDF; the pending view needs no checksum. #}
    {% if mode == 'pending' %}cast(null as bigint){% else %}case when i.received = i.total then spark_cdc_crc32c(i.text) end{% endif %} as actual_crc32c
  from images as i
),

described as (
  select
    c.*,
    concat(c.image, ' chunk_id ', substr(c.chunk_id, 1, 100), ': ') as label
  from checked as c
),

status as (
  select
    main_no,
    bool_and(complete) as complete,
    bool_or(conflict) as conflict,
    bool_or(complete and actual_crc32c != crc32c) as crc_bad,
    sum(received) as received,
    max(case when image = 'after' and complete and not conflict then text end) as after_chunked,
    max(case when image = 'before' and complete and not conflict then text end) as before_chunked,
    max(ingested_at) as fragments_ingested_at,
    concat_ws('; ', array_sort(collect_list(case when conflict then concat(label, 'index ', conflict_index, ' delivered with different data') end))) as conflict_detail,
    concat_ws('; ', array_sort(collect_list(case when complete and actual_crc32c != crc32c then concat(label, 'crc32c ', actual_crc32c, ' != declared ', crc32c) end))) as crc_detail,
    concat_ws('; ', array_sort(collect_list(case when not complete then concat(label, received, ' of ', total, ' fragments') end))) as incomplete_detail
  from described
  group by main_no
),

judged as (
  select
    m.*,
    s.complete, s.conflict, s.crc_bad, s.received, s.after_chunked, s.before_chunked,
    s.fragments_ingested_at, s.conflict_detail, s.crc_detail, s.incomplete_detail,
    case
      when s.conflict then named_struct('code', 'fragment_conflict', 'detail', s.conflict_detail)
      when not s.complete and coalesce(m.ingested_at, m.cdc_loaded_at) < {{ cutoff }}
        then named_struct('code', 'incomplete_chunk', 'detail', concat(s.incomplete_detail, ' after {{ max_age }} h'))
      when not s.complete then named_struct('code', 'pending', 'detail', s.incomplete_detail)
      when s.crc_bad then named_struct('code', 'crc_mismatch', 'detail', s.crc_detail)
    end as chunk_reason
  from mains as m
  inner join status as s on s.main_no = m.main_no
)
{%- endmacro %}

{#- Reassembly step: the CTEs referenced (chunk_ids a buffered chunked record names) and orphans
    (fragments no chunked record references, grouped by chunk_id; without those an earlier run
    quarantined, `emitted`). -#}
{% macro _aurora_dsql_orphan_fragments(emitted, same_ref, ref_type) -%}
{#- Fragments no chunked record references (their main record was lost, or is still to come). #}
referenced as (
  select distinct from_json(h.ref, {{ spark_cdc._sql_string(ref_type) }}).chunk_id as chunk_id
  from buffered as b
  lateral view explode(b.type_hints) h as image, ref
  where b.reason_code = 'chunked_buffered'
),

orphans as (
  select
    f.chunk_id,
    min_by(f.raw_ref, struct(f.raw_ref.partition, f.raw_ref.order)) as first_ref,
    count(distinct f.fragment_index) as received,
    max(f.ingested_at) as ingested_at,
    min(f.landed_at) as first_landed_at,
    max(f.landed_at) as last_landed_at
  from fragments as f
  left anti join referenced as r on r.chunk_id = f.chunk_id
  {%- if emitted is not none %}
  {#- Reported once: a chunk_id whose fragment an earlier run quarantined is done. #}
  left anti join (
    select b.chunk_id
    from fragments as b
    inner join {{ emitted }} as t on {{ same_ref }}
    where t.reason_code = 'incomplete_chunk' and t.seq is null
  ) as done on done.chunk_id = f.chunk_id
  {%- endif %}
  group by f.chunk_id
)
{%- endmacro %}

{#- Final step of the pending-chunks view: one row per image of a chunked record still waiting for
    fragments, and one per orphan chunk_id whose last fragment landed after `cutoff`. -#}
{% macro _aurora_dsql_pending_rows(cutoff) -%}
select
  m.source_table,
  m.op_raw,
  m.tx_id,
  m.commit_ts,
  h.image,
  h.ref.chunk_id as chunk_id,
  h.ref.total_fragments as total_fragments,
  i.received as fragments_received,
  true as main_record_received,
  i.first_landed_at as first_fragment_at,
  i.last_landed_at as last_fragment_at,
  coalesce(m.ingested_at, m.cdc_loaded_at) as main_record_at,
  m.raw_ref
from judged as m
inner join (select main_no, image, ref from refs) as h on h.main_no = m.main_no
inner join images as i on i.main_no = h.main_no and i.image = h.image
where m.chunk_reason.code = 'pending'
union all
select
  cast(null as string) as source_table,
  cast(null as string) as op_raw,
  cast(null as string) as tx_id,
  cast(null as timestamp) as commit_ts,
  cast(null as string) as image,
  o.chunk_id,
  cast(null as int) as total_fragments,
  cast(o.received as bigint) as fragments_received,
  false as main_record_received,
  o.first_landed_at as first_fragment_at,
  o.last_landed_at as last_fragment_at,
  cast(null as timestamp) as main_record_at,
  o.first_ref as raw_ref
from orphans as o
where o.last_landed_at >= {{ cutoff }}
{%- endmacro %}

{#- Final step of the reassembly model (first part): the CTEs reassembled (each judged record with
    its rebuilt images) and classified (_aurora_dsql_changes), then the emitted rows, shaped like the
    staging models, raw_ref pointing at the chunked main record. -#}
{% macro _aurora_dsql_reassembled_rows() -%}
reassembled as (
  select
    j.main_no,
    j.op_raw,
    j.source_table,
    case when map_contains_key(j.type_hints, 'after') then j.after_chunked else j.after end as after_text,
    case when map_contains_key(j.type_hints, 'before') then j.before_chunked else j.before end as before_text,
    cast(j.seq.s1 as string) as source_ts_ns,
    cast(null as string) as source_ts_ms,
    cast(j.seq.s2 as string) as record_ts_ns,
    cast(null as string) as record_ts_ms,
    j.chunk_reason.code as early_reason,
    j.chunk_reason.detail as early_detail,
    j.seq as staged_seq,
    j.commit_ts as staged_commit_ts,
    j.emitted_at as staged_emitted_at,
    j.tx_id,
    j.raw_ref as main_ref,
    j.received,
    greatest(j.ingested_at, j.fragments_ingested_at) as all_ingested_at
  from judged as j
  where j.chunk_reason is null or j.chunk_reason.code != 'pending'
),

classified as (
  {{ spark_cdc._aurora_dsql_changes('reassembled', 'malformed_json') }}
)

select
  {{- spark_cdc._staged_select_list({
      'cdc_format': "'aurora_dsql'",
      'source_table': 'c.source_table',
      'op': 'c.canonical_op',
      'op_raw': 'c.op_raw',
      'key': 'c.canonical_key',
      'before_key': 'case when c.reason_code is null then c.before_key end',
      'after': 'c.after_text',
      'before': 'c.before_text',
      'present_columns': 'cast(null as array<string>)',
      'changed_columns': 'cast(null as array<string>)',
      'seq': 'c.staged_seq',
      'commit_ts': 'c.staged_commit_ts',
      'emitted_at': 'c.staged_emitted_at',
      'tx_id': 'c.tx_id',
      'is_snapshot': 'false',
      'type_hints': 'cast(null as map<string, string>)',
      'raw_ref': "named_struct('relation', c.main_ref.relation, 'partition', c.main_ref.partition, 'order', c.main_ref.order,
               'fragment_count', cast(c.received + 1 as int))",
      'ingested_at': 'c.all_ingested_at',
      'cdc_loaded_at': 'current_timestamp()',
      'record_status': 'c.record_status',
      'reason_code': 'c.reason_code',
      'reason_detail': 'c.reason_detail',
      'raw_value': 'cast(null as string)',
      'raw_key': 'cast(null as string)',
      'raw_digest': 'cast(null as binary)',
  }) }}
from classified as c
{%- endmacro %}

{#- Final step of the reassembly model (second part): fragments no chunked record references,
    quarantined incomplete_chunk once their last one landed before `cutoff` (`max_age` hours). -#}
{% macro _aurora_dsql_orphan_rows(cutoff, max_age) -%}
select
  {{- spark_cdc._staged_select_list({
      'cdc_format': "'aurora_dsql'",
      'source_table': 'cast(null as string)',
      'op': 'cast(null as string)',
      'op_raw': 'cast(null as string)',
      'key': 'cast(null as string)',
      'before_key': 'cast(null as string)',
      'after': 'cast(null as string)',
      'before': 'cast(null as string)',
      'present_columns': 'cast(null as array<string>)',
      'changed_columns': 'cast(null as array<string>)',
      'seq': 'cast(null as struct<s1: decimal(38,0), s2: decimal(38,0), s3: decimal(38,0)>)',
      'commit_ts': 'cast(null as timestamp)',
      'emitted_at': 'cast(null as timestamp)',
      'tx_id': 'cast(null as string)',
      'is_snapshot': 'false',
      'type_hints': 'cast(null as map<string, string>)',
      'raw_ref': "named_struct('relation', o.first_ref.relation, 'partition', o.first_ref.partition, 'order', o.first_ref.order,
               'fragment_count', cast(o.received as int))",
      'ingested_at': 'o.ingested_at',
      'cdc_loaded_at': 'current_timestamp()',
      'record_status': "'quarantined'",
      'reason_code': "'incomplete_chunk'",
      'reason_detail': "concat('no chunked record references chunk_id ', substr(o.chunk_id, 1, 100), '; ', o.received,
         ' fragment(s) received, the last at ', o.last_landed_at, ', over " ~ max_age ~ " h ago')",
      'raw_value': 'cast(null as string)',
      'raw_key': 'cast(null as string)',
      'raw_digest': 'cast(null as binary)',
  }) }}
from orphans as o
where o.last_landed_at < {{ cutoff }}
{%- endmacro %}
