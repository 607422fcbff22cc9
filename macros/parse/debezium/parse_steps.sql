{#- Parse step: the raw rows of `raw_cte` plus `j`, the message parsed once with an explicit schema,
    with or without the converter's `schema` block (null over max_payload_bytes). Scalars are read as
    strings and converted with try_cast, so a number sent as text (or the reverse) never turns the
    whole envelope into a corrupt record. -#}
{% macro _debezium_parsed(raw_cte) -%}
  {%- set source_type -%}
struct<ts_ms: string, ts_us: string, ts_ns: string, snapshot: string, db: string, sequence: string, `schema`: string, `table`: string, txId: string, lsn: string>
  {%- endset -%}
  {%- set envelope_fields -%}
before: string, after: string, source: {{ source_type }}, op: string, ts_ms: string, ts_us: string, transaction: struct<id: string>
  {%- endset -%}
  {%- set schema_type -%}
struct<fields: array<struct<field: string, fields: array<struct<field: string, type: string, name: string, parameters: map<string, string>>>>>>
  {%- endset -%}
  {%- set message_schema -%}
struct<`schema`: {{ schema_type }}, payload: struct<{{ envelope_fields }}>, {{ envelope_fields }}, _corrupt: string>
  {%- endset %}
    select
      r.*,
      {{ spark_cdc._bounded_from_json('r.raw_value', message_schema) }} as j
    from {{ raw_cte }} as r
{%- endmacro %}

{#- Envelope step: `e`, the envelope (under `payload` or bare), and the after image's field schemas
    (`input_cte`: _debezium_parsed). -#}
{% macro _debezium_envelope(input_cte) -%}
    select
      p.*,
      case when p.j.payload is not null then p.j.payload
           else named_struct('before', p.j.before, 'after', p.j.after, 'source', p.j.source, 'op', p.j.op,
                             'ts_ms', p.j.ts_ms, 'ts_us', p.j.ts_us, 'transaction', p.j.transaction)
      end as e,
      try_element_at(filter(p.j.`schema`.fields, f -> f.field = 'after'), 1).fields as after_schema
    from {{ input_cte }} as p
{%- endmacro %}

{#- Fields step: op, source table, the after image as a map when it holds the unavailable-value
    placeholder, the image the key is read from, and the LSN sequence (`input_cte`:
    _debezium_envelope). -#}
{% macro _debezium_fields(input_cte) -%}
  {%- set placeholder = spark_cdc.format_config('debezium')['unavailable_value_placeholder'] %}
    select
      v.*,
      v.e.op as op_raw,
      case when v.e.source.`table` is not null and v.e.source.`table` != ''
           then concat_ws('.', nullif(v.e.source.`schema`, ''), v.e.source.`table`) end as source_table,
      {#- The after image as a map only when its text holds the placeholder (present_columns): a
          placeholder without characters JSON escapes appears in the text as it is. The key columns
          are read from the image by _image_key_fields / _image_key_map below. #}
      {%- if placeholder and not modules.re.search('[\\x00-\\x1f"\\\\]', placeholder) %}
      case when instr(v.e.after, {{ spark_cdc._sql_string(placeholder) }}) > 0
           then from_json(v.e.after, 'map<string, string>') end as after_map,
      {%- else %}
      from_json(v.e.after, 'map<string, string>') as after_map,
      {%- endif %}
      case when v.e.after is null then v.e.before else v.e.after end as image_text,
      from_json(v.e.source.sequence, 'array<string>') as sequence_parts,
      transform(
        coalesce(from_json(v.e.source.sequence, 'array<string>'), array()),
        x -> try_cast(x as decimal(38,0))) as lsn_sequence
    from {{ input_cte }} as v
{%- endmacro %}

{#- Key-values step: pk_columns and their values, from the image (_image_key_plan) or else the
    message key (`input_cte`: _debezium_fields). -#}
{% macro _debezium_key_values(input_cte) -%}
  {%- set key_plan = spark_cdc._image_key_plan() %}
    select
      f.*,
      transform(f.pk_columns,
                c -> coalesce({{ spark_cdc._image_key_value('c', 'f.image_keys', 'f.image_map', key_plan) }},
                              try_element_at({{ spark_cdc._debezium_key_map('f.raw_key') }}, c))) as pk_values
    from (
      select
        c.*,
        {{ spark_cdc.primary_key_columns('c.source_table', spark_cdc._debezium_key_map('c.raw_key')) }} as pk_columns,
        {{ spark_cdc._image_key_fields('c.image_text', 'c.source_table', key_plan) }} as image_keys,
        {{ spark_cdc._image_key_map('c.image_text', 'c.source_table', key_plan) }} as image_map
      from {{ input_cte }} as c
    ) as f
{%- endmacro %}

{#- Key step: the canonical key and `early_reason`: the shared checks (_common_early_reason; an empty
    value is a tombstone), repeated names, logical messages, op, table and LSN / sequence
    (`input_cte`: _debezium_key_values). -#}
{% macro _debezium_keyed(input_cte) -%}
    select
      k.*,
      {{ spark_cdc.canonical_key('k.pk_columns', 'k.pk_values') }} as canonical_key,
      case
        {{ spark_cdc._common_early_reason('k', 'tombstone') }}
        when {{ spark_cdc._image_names_a_column_twice('k.e.after') }} or {{ spark_cdc._image_names_a_column_twice('k.e.before') }} then 'invalid_envelope'
        when k.op_raw = 'm' then 'logical_message'
        when k.op_raw is null or k.op_raw not in ('c', 'u', 'd', 'r', 't') then 'unknown_op'
        when k.source_table is null then 'missing_source_table'
        {#- An LSN is an unsigned 64-bit integer: any other value (negative, fractional, not a number,
            beyond 2^64 - 1) would order the change wrongly, never by landing order instead. #}
        when k.e.source.lsn is not null and not {{ spark_cdc._integer_in_range('k.e.source.lsn', 0, '18446744073709551615') }} then 'invalid_sequence'
        when k.e.source.sequence is not null
             and not coalesce(size(k.sequence_parts) = 2
                              and forall(k.sequence_parts, x -> x is null or {{ spark_cdc._integer_in_range('x', 0, '18446744073709551615') }}), false)
          then 'invalid_sequence'
      end as early_reason
    from {{ input_cte }} as k
{%- endmacro %}

{#- Classification step: `reason_code`, the early reason or missing_key (`input_cte`:
    _debezium_keyed). -#}
{% macro _debezium_classified(input_cte) -%}
    select
      c.*,
      coalesce(
        c.early_reason,
        case when c.op_raw != 't' and c.canonical_key is null then 'missing_key' end
      ) as reason_code
    from {{ input_cte }} as c
{%- endmacro %}

{#- Final step of parse_debezium: the staged-row columns of a classified message (`input_cte`:
    _debezium_classified). -#}
{% macro _debezium_staged_row(input_cte) -%}
  {%- set placeholder = spark_cdc.format_config('debezium')['unavailable_value_placeholder'] %}
  select
    'debezium' as cdc_format,
    d.source_table,
    case d.op_raw when 'c' then 'insert' when 'u' then 'update' when 'd' then 'delete'
                  when 'r' then 'snapshot' when 't' then 'truncate' end as op,
    d.op_raw,
    d.canonical_key as key,
    case when d.op_raw = 'u' and d.e.before is not null
         then {{ spark_cdc._before_key('d.pk_columns', "from_json(d.e.before, 'map<string, string>')", 'd.canonical_key') }} end as before_key,
    d.e.after as after,
    d.e.before as before,
    case
      when exists(map_values(d.after_map), x -> x = {{ spark_cdc._sql_string(placeholder) }})
        then array_sort(filter(map_keys(d.after_map), x -> not (d.after_map[x] <=> {{ spark_cdc._sql_string(placeholder) }})))
    end as present_columns,
    cast(null as array<string>) as changed_columns,
    named_struct(
      's1', coalesce(try_element_at(d.lsn_sequence, 1), try_element_at(d.lsn_sequence, 2), try_cast(d.e.source.lsn as decimal(38,0)), d.raw_order),
      's2', coalesce(try_element_at(d.lsn_sequence, 2), try_cast(d.e.source.lsn as decimal(38,0))),
      's3', cast(null as decimal(38,0))
    ) as seq,
    coalesce({{ spark_cdc._epoch_us_to_timestamp('d.e.source.ts_us') }},
             {{ spark_cdc._epoch_ms_to_timestamp('d.e.source.ts_ms') }}) as commit_ts,
    coalesce({{ spark_cdc._epoch_us_to_timestamp('d.e.ts_us') }},
             {{ spark_cdc._epoch_ms_to_timestamp('d.e.ts_ms') }}) as emitted_at,
    coalesce(d.e.source.txId, d.e.transaction.id) as tx_id,
    (d.op_raw = 'r' or coalesce(lower(d.e.source.snapshot) in ('true', 'first', 'last', 'first_in_data_collection', 'last_in_data_collection', 'incremental'), false)) as is_snapshot,
    map_from_entries(transform(
      filter(d.after_schema, (f, i) -> f.field is not null
             and array_position(transform(d.after_schema, g -> g.field), f.field) = i + 1),
      f -> struct(f.field, to_json(named_struct('type', f.type, 'name', f.name, 'parameters', f.parameters))))) as type_hints,
    {{ spark_cdc._raw_lineage_select_list('d') }},
    case when d.reason_code in ('tombstone', 'logical_message') then 'skipped'
         when d.reason_code is not null then 'quarantined'
         else 'change' end as record_status,
    d.reason_code,
    case d.reason_code
      when 'unknown_op' then concat('op=', coalesce(substr(d.op_raw, 1, 40), 'null'))
      when 'invalid_envelope' then case when d.j._corrupt is null then 'a row image names a column twice (which value it means is undefined)'
                                        else 'an envelope field has the wrong JSON type' end
      when 'payload_too_large' then {{ spark_cdc._payload_too_large_detail('d.raw_value') }}
      when 'missing_key' then 'no primary-key value in after/before image or message key; configure var spark_cdc.tables[<schema.table>].primary_key'
      when 'invalid_sequence' then concat('source.lsn=', coalesce(substr(d.e.source.lsn, 1, 40), 'null'), ', source.sequence=',
                                          coalesce(substr(d.e.source.sequence, 1, 80), 'null'), ': an LSN is an unsigned 64-bit integer')
    end as reason_detail
  from {{ input_cte }} as d
{%- endmacro %}

{#- SQL: a Debezium message key as map<string, string> (the JSON converter's key, with or without
    its schema block), or null for an empty key. -#}
{% macro _debezium_key_map(raw_key_expr) -%}
  (case
     when {{ raw_key_expr }} is null or trim({{ raw_key_expr }}) = '' then null
     else coalesce(
       from_json({{ raw_key_expr }}, 'struct<payload: map<string, string>>').payload,
       from_json({{ raw_key_expr }}, 'map<string, string>'))
   end)
{%- endmacro %}
