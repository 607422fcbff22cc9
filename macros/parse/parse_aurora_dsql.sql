{#- Amazon Aurora DSQL CDC records -> canonical change rows plus quarantined and skipped records. Takes
    the name of a CTE shaped like spark_cdc.raw_messages(); see parse_debezium for the output columns.
    `full` records become changes; `chunked` main records and `fragment` records are staged as skipped
    (chunked_buffered / fragment_buffered) and carry what reassembly needs (see
    reassemble_aurora_dsql_chunks). Each payload is parsed once, with an explicit schema. -#}
{% macro parse_aurora_dsql(raw_cte) -%}
  {{ return(adapter.dispatch('parse_aurora_dsql', 'spark_cdc')(raw_cte)) }}
{%- endmacro %}

{% macro default__parse_aurora_dsql(raw_cte) -%}
  {#- Scalars are read as strings (Spark keeps a JSON number's spelling) and converted with try_cast;
      before/after are read as JSON text and parsed as maps, so added, dropped or renamed columns
      never break the parse. -#}
  {%- set ref_type = 'struct<chunk_id: string, total_fragments: string, crc32c: string>' -%}
  {%- set message_schema -%}
struct<type: string, op: string, before: string, after: string,
       source: struct<version: string, ts_ms: string, ts_ns: string, txId: string, `schema`: string, `table`: string, db: string, cluster: string>,
       chunked: struct<before: {{ ref_type }}, after: {{ ref_type }}>,
       ts_ms: string, ts_ns: string, chunk_id: string, index: string, data: string, _corrupt: string>
  {%- endset %}
  aurora_dsql_parsed as (
    select
      r.*,
      from_json(
        case when {{ spark_cdc._payload_within_limit('r.raw_value') }} then r.raw_value end,
        {{ spark_cdc._sql_string(message_schema | replace('\n', ' ')) }},
        map('columnNameOfCorruptRecord', '_corrupt')
      ) as j
    from {{ raw_cte }} as r
  ),

  aurora_dsql_fields as (
    select
      p.*,
      p.j.type as record_type,
      p.j.op as op_raw,
      case when p.j.source.`table` is not null and p.j.source.`table` != ''
           then concat_ws('.', nullif(p.j.source.`schema`, ''), p.j.source.`table`) end as source_table,
      p.j.after as after_text,
      p.j.before as before_text,
      p.j.source.ts_ns as source_ts_ns,
      p.j.source.ts_ms as source_ts_ms,
      p.j.ts_ns as record_ts_ns,
      p.j.ts_ms as record_ts_ms,
      p.j.source.txId as tx_id,
      {{ spark_cdc._aurora_dsql_chunk_ref('p.j.chunked.before') }} as before_ref,
      {{ spark_cdc._aurora_dsql_chunk_ref('p.j.chunked.after') }} as after_ref,
      try_cast(p.j.index as int) as fragment_index
    from aurora_dsql_parsed as p
  ),

  aurora_dsql_screened as (
    select x.*, x.early.code as early_reason, x.early.detail as early_detail
    from (
    select
      f.*,
      case
      when f.raw_value is null or trim(f.raw_value) = '' then named_struct('code', 'malformed_json', 'detail', 'empty value')
      when {{ spark_cdc._payload_too_large('f.raw_value') }}
        then named_struct('code', 'payload_too_large', 'detail', {{ spark_cdc._payload_too_large_detail('f.raw_value') }})
      when f.j is null then named_struct('code', 'malformed_json', 'detail', cast(null as string))
      when f.j._corrupt is not null and from_json(f.raw_value, 'map<string, string>') is null
        then named_struct('code', 'malformed_json', 'detail', cast(null as string))
      when f.j._corrupt is not null then named_struct('code', 'invalid_envelope', 'detail', 'an envelope field has the wrong JSON type')
      when f.record_type is null or f.record_type not in ('full', 'chunked', 'fragment')
        then named_struct('code', 'invalid_envelope', 'detail', concat('type=', coalesce(substr(f.record_type, 1, 40), 'null')))
      when f.record_type = 'fragment' and (coalesce(f.j.chunk_id, '') = '' or f.fragment_index is null
                                           or f.fragment_index < 0 or f.j.data is null)
        then named_struct('code', 'invalid_envelope', 'detail', 'a fragment needs chunk_id, a non-negative integer index and data')
      when f.record_type = 'fragment' then named_struct('code', 'fragment_buffered', 'detail', cast(null as string))
      when f.source_table is null then named_struct('code', 'missing_source_table', 'detail', cast(null as string))
      when f.source_ts_ns is null
        then named_struct('code', 'missing_sequence', 'detail', 'source.ts_ns is missing')
      when not {{ spark_cdc._integer_in_range('f.source_ts_ns', 0, '9223372036854775807') }}
           or (f.record_ts_ns is not null and not {{ spark_cdc._integer_in_range('f.record_ts_ns', 0, '9223372036854775807') }})
        then named_struct('code', 'invalid_sequence',
                          'detail', concat('source.ts_ns=', substr(f.source_ts_ns, 1, 40), ', ts_ns=', coalesce(substr(f.record_ts_ns, 1, 40), 'null'),
                                           ': nanoseconds since the epoch are a non-negative 64-bit integer'))
      when f.record_type = 'chunked' and ((f.j.chunked.before is not null and f.before_ref is null)
                                          or (f.j.chunked.after is not null and f.after_ref is null)
                                          or (f.before_ref is null and f.after_ref is null))
        then named_struct('code', 'invalid_envelope',
                          'detail', 'chunked.before/after need chunk_id, total_fragments >= 1 and a decimal crc32c')
      when f.record_type = 'chunked' then named_struct('code', 'chunked_buffered', 'detail', cast(null as string))
    end as early
    from aurora_dsql_fields as f
    ) as x
  ),

  aurora_dsql_classified as (
    {{ spark_cdc._aurora_dsql_changes('aurora_dsql_screened', 'invalid_envelope') }}
  )

  select
    'aurora_dsql' as cdc_format,
    d.source_table,
    case when d.reason_code = 'fragment_buffered' then null else d.canonical_op end as op,
    case when d.reason_code = 'fragment_buffered' then null else d.op_raw end as op_raw,
    {#- A buffered fragment carries its chunk_id in `key`, its index in seq.s1 and its text in
        `after`; a buffered chunked record carries its chunk references in `type_hints`. -#}
    case when d.reason_code = 'fragment_buffered' then d.j.chunk_id else d.canonical_key end as key,
    case when d.reason_code is null then d.before_key end as before_key,
    case when d.reason_code = 'fragment_buffered' then d.j.data else d.after_text end as after,
    case when d.reason_code = 'fragment_buffered' then null else d.before_text end as before,
    cast(null as array<string>) as present_columns,
    cast(null as array<string>) as changed_columns,
    case when d.reason_code = 'fragment_buffered'
         then named_struct('s1', cast(d.fragment_index as decimal(38,0)), 's2', cast(null as decimal(38,0)), 's3', cast(null as decimal(38,0)))
         else d.seq end as seq,
    d.commit_ts,
    d.emitted_at,
    d.tx_id,
    false as is_snapshot,
    case when d.reason_code = 'chunked_buffered' then map_from_entries(filter(
      array(struct('before' as image, to_json(d.before_ref) as ref), struct('after' as image, to_json(d.after_ref) as ref)),
      e -> e.ref is not null)) end as type_hints,
    d.raw_order,
    d.raw_partition,
    d.raw_relation,
    d.raw_digest,
    d.raw_delivery,
    d.raw_value,
    d.raw_key,
    d.ingested_at,
    d.record_status,
    d.reason_code,
    d.reason_detail
  from aurora_dsql_classified as d
{%- endmacro %}

{#- SQL expression: a validated chunk reference struct<chunk_id, total_fragments int, crc32c bigint>
    from the envelope's chunked.<image> struct, or null when absent or invalid. -#}
{% macro _aurora_dsql_chunk_ref(ref_expr) -%}
  case
    when coalesce({{ ref_expr }}.chunk_id, '') != ''
     and try_cast({{ ref_expr }}.total_fragments as int) >= 1
     and {{ ref_expr }}.crc32c rlike '^[0-9]{1,10}$'
     and try_cast({{ ref_expr }}.crc32c as bigint) <= 4294967295
    then named_struct('chunk_id', {{ ref_expr }}.chunk_id,
                      'total_fragments', try_cast({{ ref_expr }}.total_fragments as int),
                      'crc32c', try_cast({{ ref_expr }}.crc32c as bigint))
  end
{%- endmacro %}

{#- SELECT over `input_cte` (columns op_raw, source_table, after_text, before_text, source_ts_ns,
    source_ts_ms, record_ts_ns, record_ts_ms, early_reason, early_detail) adding the canonical op,
    key, seq, commit_ts, emitted_at, record_status, reason_code and reason_detail of a DSQL record.
    Shared by staging (full records) and reassembly (chunked records, whose images were rebuilt);
    `not_object_reason` is the reason code for an image that is not a JSON object. -#}
{% macro _aurora_dsql_changes(input_cte, not_object_reason) -%}
  select
    s.*,
    s.reason.code as reason_code,
    s.reason.detail as reason_detail,
    {#- DSQL sends no before image for inserts and updates today; should one name another key, the
        primary key changed. #}
    case when s.op_raw != 'd' and s.before_map is not null
         then {{ spark_cdc._before_key('s.pk_columns', 's.before_map', 's.canonical_key') }} end as before_key,
    case when s.reason.code in ('fragment_buffered', 'chunked_buffered') then 'skipped'
         when s.reason.code is not null then 'quarantined'
         else 'change' end as record_status
  from (
  select
    k.*,
    case
      when k.early_reason is not null then named_struct('code', k.early_reason, 'detail', k.early_detail)
      when k.op_raw = 'd' and k.before_text is null
        then named_struct('code', 'missing_key',
                          'detail', 'delete without a before image (DSQL sends key values only for tables with a primary key)')
      when k.op_raw = 'd' and k.before_map is null
        then named_struct('code', {{ spark_cdc._sql_string(not_object_reason) }}, 'detail', 'the before image is not a JSON object')
      when not (k.op_raw <=> 'd') and k.after_text is null
        then named_struct('code', 'invalid_envelope',
                          'detail', concat('op=', coalesce(substr(k.op_raw, 1, 40), 'null'), ' without an after image'))
      when not (k.op_raw <=> 'd') and k.after_map is null
        then named_struct('code', {{ spark_cdc._sql_string(not_object_reason) }}, 'detail', 'the after image is not a JSON object')
      when {{ spark_cdc._image_names_a_column_twice('k.after_text') }} or {{ spark_cdc._image_names_a_column_twice('k.before_text') }}
        then named_struct('code', 'invalid_envelope', 'detail', 'a row image names a column twice (which value it means is undefined)')
      when k.canonical_key is null
        then named_struct('code', 'missing_key',
                          'detail', 'no primary-key value in the image; configure var spark_cdc.tables[<schema.table>].primary_key')
    end as reason
  from (
    select
      kc.*,
      {{ spark_cdc.canonical_key('kc.pk_columns', spark_cdc.key_values('kc.pk_columns', 'kc.key_image', 'cast(null as map<string, string>)')) }} as canonical_key
    from (
      select
        m.*,
        {#- Configured tables use their primary_key; a delete's before image holds exactly the
            primary-key columns, so it names them for tables not configured. -#}
        {{ spark_cdc.primary_key_columns('m.source_table', "case when m.op_raw = 'd' then m.before_map end") }} as pk_columns,
        case when m.op_raw = 'd' then m.before_map else m.after_map end as key_image
      from (
        select
          i.*,
          {#- DSQL emits c for inserts and updates alike (and will add u); any other op is an upsert
              of the after image, as the format asks. -#}
          case i.op_raw when 'd' then 'delete' when 'u' then 'update' else 'upsert' end as canonical_op,
          from_json(i.after_text, 'map<string, string>') as after_map,
          from_json(i.before_text, 'map<string, string>') as before_map,
          named_struct(
            's1', try_cast(i.source_ts_ns as decimal(38,0)),
            's2', try_cast(i.record_ts_ns as decimal(38,0)),
            's3', cast(null as decimal(38,0))
          ) as seq,
          coalesce({{ spark_cdc._epoch_us_to_timestamp('div(try_cast(i.source_ts_ns as bigint), 1000)') }},
                   {{ spark_cdc._epoch_ms_to_timestamp('i.source_ts_ms') }}) as commit_ts,
          coalesce({{ spark_cdc._epoch_us_to_timestamp('div(try_cast(i.record_ts_ns as bigint), 1000)') }},
                   {{ spark_cdc._epoch_ms_to_timestamp('i.record_ts_ms') }}) as emitted_at
        from {{ input_cte }} as i
      ) as m
    ) as kc
  ) as k
  ) as s
{%- endmacro %}

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
with buffered as (
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
),

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
),

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
{%- if mode == 'pending' %}

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
{%- else %},

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
  'aurora_dsql' as cdc_format,
  c.source_table,
  c.canonical_op as op,
  c.op_raw,
  c.canonical_key as key,
  case when c.reason_code is null then c.before_key end as before_key,
  c.after_text as after,
  c.before_text as before,
  cast(null as array<string>) as present_columns,
  cast(null as array<string>) as changed_columns,
  c.staged_seq as seq,
  c.staged_commit_ts as commit_ts,
  c.staged_emitted_at as emitted_at,
  c.tx_id,
  false as is_snapshot,
  cast(null as map<string, string>) as type_hints,
  named_struct('relation', c.main_ref.relation, 'partition', c.main_ref.partition, 'order', c.main_ref.order,
               'fragment_count', cast(c.received + 1 as int)) as raw_ref,
  c.all_ingested_at as ingested_at,
  current_timestamp() as cdc_loaded_at,
  c.record_status,
  c.reason_code,
  c.reason_detail,
  cast(null as string) as raw_value,
  cast(null as string) as raw_key,
  cast(null as binary) as raw_digest
from classified as c
union all
select
  'aurora_dsql' as cdc_format,
  cast(null as string) as source_table,
  cast(null as string) as op,
  cast(null as string) as op_raw,
  cast(null as string) as key,
  cast(null as string) as before_key,
  cast(null as string) as after,
  cast(null as string) as before,
  cast(null as array<string>) as present_columns,
  cast(null as array<string>) as changed_columns,
  cast(null as struct<s1: decimal(38,0), s2: decimal(38,0), s3: decimal(38,0)>) as seq,
  cast(null as timestamp) as commit_ts,
  cast(null as timestamp) as emitted_at,
  cast(null as string) as tx_id,
  false as is_snapshot,
  cast(null as map<string, string>) as type_hints,
  named_struct('relation', o.first_ref.relation, 'partition', o.first_ref.partition, 'order', o.first_ref.order,
               'fragment_count', cast(o.received as int)) as raw_ref,
  o.ingested_at,
  current_timestamp() as cdc_loaded_at,
  'quarantined' as record_status,
  'incomplete_chunk' as reason_code,
  concat('no chunked record references chunk_id ', substr(o.chunk_id, 1, 100), '; ', o.received,
         ' fragment(s) received, the last at ', o.last_landed_at, ', over {{ max_age }} h ago') as reason_detail,
  cast(null as string) as raw_value,
  cast(null as string) as raw_key,
  cast(null as binary) as raw_digest
from orphans as o
where o.last_landed_at < {{ cutoff }}
{%- endif %}
{%- endmacro %}
