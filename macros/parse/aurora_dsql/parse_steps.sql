{#- Parse step: the raw rows of `raw_cte` plus `j`, the DSQL record parsed once with an explicit
    schema (null over max_payload_bytes). Scalars are read as strings (Spark keeps a JSON number's
    spelling) and converted with try_cast; before/after are read as JSON text and parsed as maps, so
    added, dropped or renamed columns never break the parse. -#}
{% macro _aurora_dsql_parsed(raw_cte) -%}
  {%- set ref_type = 'struct<chunk_id: string, total_fragments: string, crc32c: string>' -%}
  {%- set message_schema -%}
struct<type: string, op: string, before: string, after: string,
       source: struct<version: string, ts_ms: string, ts_ns: string, txId: string, `schema`: string, `table`: string, db: string, cluster: string>,
       chunked: struct<before: {{ ref_type }}, after: {{ ref_type }}>,
       ts_ms: string, ts_ns: string, chunk_id: string, index: string, data: string, _corrupt: string>
  {%- endset %}
    select
      r.*,
      {{ spark_cdc._bounded_from_json('r.raw_value', message_schema | replace('\n', ' ')) }} as j
    from {{ raw_cte }} as r
{%- endmacro %}

{#- Fields step: the envelope fields of a parsed DSQL record (`input_cte`: _aurora_dsql_parsed) as
    columns, chunk references validated (_aurora_dsql_chunk_ref). -#}
{% macro _aurora_dsql_fields(input_cte) -%}
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
    from {{ input_cte }} as p
{%- endmacro %}

{#- Screening step: `early_reason` / `early_detail` of a DSQL record (`input_cte`: _aurora_dsql_fields),
    the reasons decided before its images are read: the shared checks (_common_early_reason), the
    record type, buffered fragments and chunked records, the source table and ts_ns. -#}
{% macro _aurora_dsql_screened(input_cte) -%}
    select x.*, x.early.code as early_reason, x.early.detail as early_detail
    from (
    select
      f.*,
      case
      {{ spark_cdc._common_early_reason('f', 'malformed_json', detailed=true) }}
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
    from {{ input_cte }} as f
    ) as x
{%- endmacro %}

{#- Final step of parse_aurora_dsql: the staged-row columns of a classified DSQL record (`input_cte`:
    _aurora_dsql_changes). -#}
{% macro _aurora_dsql_staged_row(input_cte) -%}
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
    {{ spark_cdc._raw_lineage_select_list('d') }},
    d.record_status,
    d.reason_code,
    d.reason_detail
  from {{ input_cte }} as d
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
