{#- Parse step: the raw rows of `raw_cte` plus `v0`, the value parsed once (a VARIANT; on Spark 3.5
    its JSON text, macros/parse/json_values.sql), null over max_payload_bytes or when not JSON. -#}
{% macro _cockroachdb_parsed(raw_cte) -%}
    select
      r.*,
      case when {{ spark_cdc._payload_within_limit('r.raw_value') }} then {{ spark_cdc._jv_parse('r.raw_value') }} end as v0
    from {{ raw_cte }} as r
{%- endmacro %}

{#- Sinkless step: `sl`, a sinkless changefeed row's key, table and value, and is_sinkless (the
    message is exactly such a row) (`input_cte`: _cockroachdb_parsed). -#}
{% macro _cockroachdb_sinkless(input_cte) -%}
    select
      p.*,
      {{ spark_cdc._jv_struct('p.v0', [['key', 'variant'], ['table', 'string'], ['value', 'variant']]) }} as sl,
      coalesce(
        array_sort(map_keys({{ spark_cdc._jv_members('p.v0') }})) = array('key', 'table', 'value')
        and {{ spark_cdc._jv_is_string(spark_cdc._jv_member('p.v0', 'value')) }}
        and {{ spark_cdc._jv_is_string(spark_cdc._jv_member('p.v0', 'key')) }},
        false) as is_sinkless
    from {{ input_cte }} as p
{%- endmacro %}

{#- Message step: is_empty, `m` (the message: the sinkless row's inner value parsed, else `v0`), the
    key text and a sinkless row's table (`input_cte`: _cockroachdb_sinkless). -#}
{% macro _cockroachdb_message(input_cte) -%}
    select
      q.*,
      case when q.is_sinkless then trim({{ spark_cdc._cdc_member_string('q.sl.value') }}) = ''
           else {{ spark_cdc._raw_value_is_empty('q.raw_value') }} end as is_empty,
      case when q.is_sinkless
           then case when trim({{ spark_cdc._cdc_member_string('q.sl.value') }}) != ''
                     then {{ spark_cdc._jv_parse(spark_cdc._cdc_member_string('q.sl.value')) }} end
           else q.v0 end as m,
      case when q.is_sinkless then {{ spark_cdc._cdc_member_string('q.sl.key') }} else q.raw_key end as key_text,
      case when q.is_sinkless then q.sl.`table` end as sinkless_table
    from {{ input_cte }} as q
{%- endmacro %}

{#- Envelope step: `e`, the wrapped / enriched envelope fields; `w`, the same under enriched
    `payload`; `top` / `top_text`, the message's members; `crdb`, the __crdb__ block (`input_cte`:
    _cockroachdb_message). -#}
{% macro _cockroachdb_envelope(input_cte) -%}
  {#- Wrapped / enriched envelope fields. Every field is a variant or a string, so the cast of any
      JSON object succeeds; the JSON type of each field is checked where it is used. -#}
  {%- set envelope_fields = [['after', 'variant'], ['before', 'variant'], ['key', 'variant'], ['updated', 'string'],
                             ['resolved', 'string'], ['topic', 'string'], ['op', 'string'], ['ts_ns', 'string'],
                             ['source', 'variant'], ['payload', 'variant'], ['schema', 'variant'], ['__crdb__', 'variant']] -%}
  {%- set crdb_fields = [['key', 'variant'], ['updated', 'string'], ['resolved', 'string'], ['topic', 'string']] %}
    select
      t.*,
      {{ spark_cdc._jv_members('t.m') }} as top,
      {{ spark_cdc._jv_string_members('t.m') }} as top_text,
      {#- enriched_properties=schema nests the envelope under `payload` next to its `schema`. #}
      case when t.e.payload is not null and t.e.after is null and t.e.op is null and t.e.resolved is null
           then {{ spark_cdc._jv_struct('t.e.payload', envelope_fields) }} else t.e end as w,
      {{ spark_cdc._jv_struct('t.e.`__crdb__`', crdb_fields) }} as crdb
    from (
      select x.*, {{ spark_cdc._jv_struct('x.m', envelope_fields) }} as e
      from {{ input_cte }} as x
    ) as t
{%- endmacro %}

{#- Fields step: the resolved timestamp text, the images (members, string maps and their kind), op,
    HLC text, key array, source table, the enriched schema and ts_ns, read for the configured
    envelope (`opts`: _cockroachdb_options; `input_cte`: _cockroachdb_envelope). -#}
{% macro _cockroachdb_fields(input_cte, opts) -%}
  {%- set envelope = opts['envelope'] -%}
  {%- set wrapped = envelope in ('wrapped', 'enriched') -%}
  {%- set s = spark_cdc._sql_string -%}
  {%- set known_fields = ['after', 'before', 'key', 'updated', 'resolved', 'topic', 'op', 'ts_ns', 'source',
                          'payload', 'schema', '__crdb__', 'mvcc_timestamp'] -%}
  {%- set source_fields = [['table_name', 'string'], ['primary_keys', 'array<string>'], ['ts_hlc', 'string']] -%}
  {%- set schema_type = 'array<struct<field: string, fields: array<struct<field: string, type: string, name: string, optional: boolean, parameters: map<string, string>>>>>' -%}
  {%- set excluded_row_fields = ['__crdb__'] + ([opts['event_op_column']] if opts['event_op_column'] else [])
                                + ([opts['previous_row_column']] if opts['previous_row_column'] else []) -%}
    select
      f.*,
      coalesce(f.crdb.resolved,
               case when array_sort(map_keys(f.top)) = array('resolved') then f.e.resolved end
               {%- if wrapped %},
               case when f.e.after is null and f.e.before is null then f.e.resolved end
               {%- endif %}) as resolved_text,
      {%- if wrapped %}
      filter(map_keys(f.top), k -> k not in ({% for k in known_fields %}{{ s(k) }}{{ ', ' if not loop.last }}{% endfor %})) as unknown_fields,
      {{ spark_cdc._jv_struct('f.w.source', source_fields) }} as src,
      f.w.after as after_members,
      f.w.before as before_members,
      {#- after_map and before_map come from the subquery below. An image is an object exactly
          when its string map is not null (every JSON value casts to a string), so that one read
          serves both: a second read as map<string, variant> to tell objects apart cost about
          1.3 s per image per 1,000,000 messages. #}
      case when f.w.after is null then 'missing' when {{ spark_cdc._cdc_member_is_null('f.w.after') }} then 'null'
           when f.after_map is not null then 'object' else 'other' end as after_kind,
      case when f.w.before is null then 'missing' when {{ spark_cdc._cdc_member_is_null('f.w.before') }} then 'null'
           when f.before_map is not null then 'object' else 'other' end as before_kind,
      f.w.op as op_raw,
      coalesce(f.w.updated, f.crdb.updated,
               {{ spark_cdc._jv_member_string('f.w.source', 'ts_hlc') }}) as hlc_text,
      coalesce({{ spark_cdc._jv_string_array('f.w.key') }}, {{ spark_cdc._jv_string_array('f.crdb.key') }}) as envelope_key,
      coalesce(f.sinkless_table, f.w.topic, f.crdb.topic,
               {{ spark_cdc._jv_member_string('f.w.source', 'table_name') }},
               {{ s(opts['source_table']) }}) as source_table,
      {{ spark_cdc._jv_member_as('f.e.`schema`', 'fields', schema_type) }} as schema_fields,
      f.w.ts_ns as emitted_ns
      {%- else %}
      cast(array() as array<string>) as unknown_fields,
      cast(null as struct<{{ spark_cdc._jv_struct_fields(source_fields) }}>) as src,
      map_filter(f.top_text, (k, v) -> k not in ({% for k in excluded_row_fields %}{{ s(k) }}{{ ', ' if not loop.last }}{% endfor %})) as after_map,
      map_filter(f.top, (k, v) -> k not in ({% for k in excluded_row_fields %}{{ s(k) }}{{ ', ' if not loop.last }}{% endfor %})) as after_members,
      {%- if opts['previous_row_column'] %}
      {{ spark_cdc._jv_string_members('try_element_at(f.top, ' ~ s(opts['previous_row_column']) ~ ')') }} as before_map,
      try_element_at(f.top, {{ s(opts['previous_row_column']) }}) as before_members,
      {%- else %}
      cast(null as map<string, string>) as before_map,
      cast(null as {{ spark_cdc._jv_type() }}) as before_members,
      {%- endif %}
      case when f.top is not null then 'object' end as after_kind,
      'missing' as before_kind,
      {%- if opts['event_op_column'] %}
      try_element_at(f.top_text, {{ s(opts['event_op_column']) }}) as op_raw,
      {%- else %}
      cast(null as string) as op_raw,
      {%- endif %}
      f.crdb.updated as hlc_text,
      {{ spark_cdc._jv_string_array('f.crdb.key') }} as envelope_key,
      coalesce(f.sinkless_table, f.crdb.topic, {{ s(opts['source_table']) }}) as source_table,
      cast(null as {{ schema_type }}) as schema_fields,
      cast(null as string) as emitted_ns
      {%- endif %}
    {%- if wrapped %}
    from (
      select g.*,
             {{ spark_cdc._jv_string_members('g.w.after') }} as after_map,
             {{ spark_cdc._jv_string_members('g.w.before') }} as before_map
      from {{ input_cte }} as g
    ) as f
    {%- else %}
    from {{ input_cte }} as f
    {%- endif %}
{%- endmacro %}

{#- Operation step: op_mapped for the configured envelope, HLC validity, the key array and the
    primary-key column names (`opts`: _cockroachdb_options; `input_cte`: _cockroachdb_fields). -#}
{% macro _cockroachdb_ops(input_cte, opts) -%}
  {%- set envelope = opts['envelope'] -%}
  {%- set wrapped = envelope in ('wrapped', 'enriched') -%}
  {%- set s = spark_cdc._sql_string -%}
    select
      o.*,
      {%- if wrapped %}
      case
        when o.op_raw is not null then
          case o.op_raw when 'c' then 'insert' when 'u' then 'update' when 'd' then 'delete' end
        when o.after_kind = 'object' then
          case o.before_kind when 'null' then 'insert' when 'object' then 'update' else 'upsert' end
        when o.after_kind in ('missing', 'null') then 'delete'
      end as op_mapped,
      {%- elif envelope == 'key_only' %}
      case when o.is_empty then 'key_only' end as op_mapped,
      {%- else %}
      case
        when o.is_empty then 'delete'
        when o.op_raw is null then 'upsert'
        when lower(o.op_raw) in ('insert', 'update', 'upsert', 'delete') then lower(o.op_raw)
      end as op_mapped,
      {%- endif %}
      o.hlc_text rlike '^[0-9]{1,20}([.][0-9]{1,10})?$' as hlc_valid,
      o.resolved_text rlike '^[0-9]{1,20}([.][0-9]{1,10})?$' as resolved_valid,
      coalesce(o.envelope_key,
               case when o.key_text is not null and trim(o.key_text) != ''
                    then {{ spark_cdc._jv_string_array(spark_cdc._jv_parse('o.key_text')) }} end) as key_array,
      coalesce({{ spark_cdc._cockroachdb_primary_key_names('o.source_table') }}, o.src.primary_keys) as pk_names
    from {{ input_cte }} as o
{%- endmacro %}

{#- Key step: the primary-key values in declared order, the canonical key and ts_text (the resolved
    or updated HLC) (`input_cte`: _cockroachdb_ops). -#}
{% macro _cockroachdb_keyed(input_cte) -%}
    select
      k.*,
      {{ spark_cdc.canonical_key('array_sort(k.pk_names)',
           'transform(array_sort(k.pk_names), c -> element_at(k.pk_values, cast(array_position(k.pk_names, c) as int)))') }} as canonical_key,
      case when k.resolved_text is not null then k.resolved_text else k.hlc_text end as ts_text
    from (
      select
        y.*,
        {#- Key values in declared order: the key array when it has one value per primary-key column,
            else the named columns of the image. #}
        case when y.key_array is not null and size(y.key_array) = size(y.pk_names) then y.key_array
             else transform(y.pk_names, c -> try_element_at(coalesce(y.after_map, y.before_map), c)) end as pk_values
      from {{ input_cte }} as y
    ) as k
{%- endmacro %}

{#- Classification step: the HLC's wall time and logical counter, and `early_reason` (empty value,
    payload_too_large, malformed_json, resolved, envelope checks) (`opts`: _cockroachdb_options;
    `input_cte`: _cockroachdb_keyed). -#}
{% macro _cockroachdb_classified(input_cte, opts) -%}
  {%- set envelope = opts['envelope'] -%}
  {%- set wrapped = envelope in ('wrapped', 'enriched') -%}
  {%- set s = spark_cdc._sql_string -%}
    select
      c.*,
      case when c.ts_text rlike '^[0-9]{1,20}([.][0-9]{1,10})?$'
           then cast(split_part(c.ts_text, '.', 1) as decimal(38,0)) end as hlc_wall,
      case when c.ts_text rlike '^[0-9]{1,20}([.][0-9]{1,10})?$'
           then coalesce(try_cast(nullif(split_part(c.ts_text, '.', 2), '') as decimal(38,0)), cast(0 as decimal(38,0))) end as hlc_logical,
      case
        {%- if wrapped %}
        when c.is_empty then 'tombstone'
        {%- endif %}
        when c.is_empty then null
        when {{ spark_cdc._payload_too_large('c.raw_value') }} then 'payload_too_large'
        when c.v0 is null or c.m is null then 'malformed_json'
        when c.top is null then 'malformed_json'
        when c.resolved_text is not null and not c.resolved_valid then 'invalid_envelope'
        when c.resolved_text is not null then 'resolved'
        {%- if wrapped %}
        when size(c.unknown_fields) > 0 then 'invalid_envelope'
        when c.after_kind = 'other' or c.before_kind = 'other' then 'invalid_envelope'
        {%- elif envelope == 'key_only' %}
        when true then 'invalid_envelope'
        {%- endif %}
      end as early_reason
    from {{ input_cte }} as c
{%- endmacro %}

{#- Reason step: `reason_code`, the early reason or the record's own checks (op, table, key,
    sequence for the configured order_by) (`opts`: _cockroachdb_options; `input_cte`:
    _cockroachdb_classified). -#}
{% macro _cockroachdb_reasoned(input_cte, opts) -%}
  {%- set order_by = opts['order_by'] %}
    select
      d.*,
      coalesce(
        d.early_reason,
        case
          when d.op_mapped is null then 'unknown_op'
          when d.source_table is null then 'missing_source_table'
          when d.canonical_key is null then 'missing_key'
          when d.hlc_text is not null and not d.hlc_valid then 'invalid_sequence'
          {#- An HLC is a signed 64-bit wall time (nanoseconds) and a 32-bit logical counter. #}
          when d.hlc_text is not null and (d.hlc_wall > 9223372036854775807 or d.hlc_logical > 2147483647) then 'invalid_sequence'
          {%- if order_by == 'updated' %}
          when d.hlc_text is null then 'missing_sequence'
          {%- else %}
          when d.raw_order is null then 'missing_sequence'
          {%- endif %}
        end
      ) as reason_code
    from {{ input_cte }} as d
{%- endmacro %}

{#- Final step of parse_cockroachdb: the staged-row columns of a reasoned message (`opts`:
    _cockroachdb_options; `input_cte`: _cockroachdb_reasoned). -#}
{% macro _cockroachdb_staged_row(input_cte, opts) -%}
  {%- set order_by = opts['order_by'] %}
  select
    'cockroachdb' as cdc_format,
    z.source_table,
    case when z.reason_code is null then z.op_mapped end as op,
    z.op_raw,
    case when z.reason_code is null then z.canonical_key end as key,
    case when z.reason_code is null and z.op_mapped in ('update', 'upsert') and z.before_map is not null
         then {{ spark_cdc._before_key('array_sort(z.pk_names)', 'z.before_map', 'z.canonical_key') }} end as before_key,
    {#- Images as the message carries them, through VARIANT (exact decimals; a JSONB column's JSON
        string stays a string, unlike Spark's JSON-to-text reader). The wrapped envelopes' after is a
        parsed value, the others' a map of members. #}
    {%- if opts['envelope'] in ('wrapped', 'enriched') %}
    case when z.op_mapped not in ('delete', 'key_only') then {{ spark_cdc._cdc_member_json('z.after_members') }} end as after,
    {%- else %}
    case when z.op_mapped not in ('delete', 'key_only') then {{ spark_cdc._jv_map_json('z.after_members') }} end as after,
    {%- endif %}
    case when z.before_map is not null then {{ spark_cdc._cdc_member_json('z.before_members') }} end as before,
    case when z.op_mapped not in ('delete', 'key_only') then array_sort(map_keys(z.after_map)) end as present_columns,
    case when z.op_mapped = 'update' and z.after_map is not null and z.before_map is not null
         then array_sort(filter(array_union(map_keys(z.after_map), map_keys(z.before_map)),
                                c -> not (try_element_at(z.after_map, c) <=> try_element_at(z.before_map, c)))) end as changed_columns,
    named_struct(
      {%- if order_by == 'updated' %}
      's1', z.hlc_wall,
      's2', z.hlc_logical,
      {%- else %}
      's1', case when z.reason_code = 'resolved' then z.hlc_wall else z.raw_order end,
      's2', case when z.reason_code = 'resolved' then z.hlc_logical end,
      {%- endif %}
      's3', cast(null as decimal(38,0))
    ) as seq,
    {{ spark_cdc._epoch_us_to_timestamp('(z.hlc_wall div 1000)') }} as commit_ts,
    {{ spark_cdc._epoch_us_to_timestamp('(try_cast(z.emitted_ns as decimal(38,0)) div 1000)') }} as emitted_at,
    cast(null as string) as tx_id,
    false as is_snapshot,
    {#- enriched_properties=schema: each after column's Kafka Connect field schema. #}
    map_from_entries(transform(
      filter(z.after_schema, (f, i) -> f.field is not null
             and array_position(transform(z.after_schema, g -> g.field), f.field) = i + 1),
      f -> struct(f.field, to_json(named_struct('type', f.type, 'name', f.name, 'optional', f.optional, 'parameters', f.parameters))))) as type_hints,
    {{ spark_cdc._raw_lineage_select_list('z') }},
    case when z.reason_code in ('tombstone', 'resolved') then 'skipped'
         when z.reason_code is not null then 'quarantined'
         else 'change' end as record_status,
    z.reason_code,
    {{ spark_cdc._cockroachdb_reason_detail('z', opts) }} as reason_detail
  from (
    select r.*, try_element_at(filter(r.schema_fields, f -> f.field = 'after'), 1).fields as after_schema
    from {{ input_cte }} as r
  ) as z
{%- endmacro %}

{#- SQL expression: the reason_detail of a reasoned CockroachDB message, row alias `a`
    (`opts`: _cockroachdb_options). -#}
{% macro _cockroachdb_reason_detail(a, opts) -%}
  {%- set envelope = opts['envelope'] -%}
  {%- set order_by = opts['order_by'] -%}
  {%- set s = spark_cdc._sql_string %}
    case {{ a }}.reason_code
      when 'resolved' then concat('resolved ', {{ a }}.resolved_text)
      when 'payload_too_large' then {{ spark_cdc._payload_too_large_detail(a ~ '.raw_value') }}
      when 'malformed_json' then 'the value (or a sinkless row\'s inner value) is not a JSON object'
      when 'unknown_op' then concat('op=', coalesce(substr({{ a }}.op_raw, 1, 40), 'null'))
      when 'missing_source_table' then 'no topic, __crdb__.topic, sinkless table or enriched source.table_name; set var spark_cdc.formats.cockroachdb.source_table'
      when 'missing_key' then concat('no primary-key value for ', coalesce(to_json({{ a }}.pk_names), 'unknown primary-key columns'),
                                      ' in the key array or image; configure var spark_cdc.tables[<table>].primary_key (in key order)')
      when 'invalid_sequence' then concat('updated is not an HLC (<wall ns>.<logical>, a 64-bit wall time and a 32-bit logical counter): ', substr({{ a }}.hlc_text, 1, 60))
      when 'missing_sequence' then
        {%- if order_by == 'updated' %}
        case when {{ a }}.is_empty then 'an empty-value message carries no updated HLC; set formats.cockroachdb.order_by: raw_order'
             else 'no updated HLC (create the changefeed WITH updated, or set formats.cockroachdb.order_by: raw_order)' end
        {%- else %}
        'the raw row has no order value'
        {%- endif %}
      when 'invalid_envelope' then
        case
          when {{ a }}.resolved_text is not null and not {{ a }}.resolved_valid then concat('resolved is not an HLC: ', substr({{ a }}.resolved_text, 1, 60))
          when size({{ a }}.unknown_fields) > 0 then concat('unexpected field(s) for the ', {{ s(envelope) }}, ' envelope: ',
                                                      substr(array_join(array_sort({{ a }}.unknown_fields), ','), 1, 200))
          when {{ a }}.after_kind = 'other' or {{ a }}.before_kind = 'other' then 'after/before is not a JSON object or null'
          when {{ a }}.hlc_text is not null and not {{ a }}.hlc_valid then concat('updated is not an HLC: ', substr({{ a }}.hlc_text, 1, 60))
          else 'a non-empty value under envelope key_only'
        end
    end
{%- endmacro %}

{#- The cockroachdb format options, validated and with `order_by: auto` resolved: `raw_order` for
    the row and key_only envelopes (their empty-value messages carry no HLC), else `updated`. -#}
{% macro _cockroachdb_options() -%}
  {%- set cfg = spark_cdc.format_config('cockroachdb') -%}
  {%- set envelope = (cfg.get('envelope') or 'wrapped') | string | trim | lower -%}
  {%- set order_by = (cfg.get('order_by') or 'auto') | string | trim | lower -%}
  {%- set where = "model '" ~ (model.name if model is defined and model else 'stg_cdc__cockroachdb') ~ "'" -%}
  {%- if envelope not in ('wrapped', 'enriched', 'bare', 'row', 'key_only') -%}
    {{ exceptions.raise_compiler_error("spark_cdc: " ~ where ~ ": var('spark_cdc').formats.cockroachdb.envelope is '" ~ envelope ~ "'. Fix: set it to the changefeed's envelope option: wrapped (default), enriched, bare, row or key_only.") }}
  {%- endif -%}
  {%- if order_by not in ('auto', 'updated', 'raw_order') -%}
    {{ exceptions.raise_compiler_error("spark_cdc: " ~ where ~ ": var('spark_cdc').formats.cockroachdb.order_by is '" ~ order_by ~ "'. Fix: use updated (the changefeed runs WITH updated), raw_order (order by the raw order column) or auto.") }}
  {%- endif -%}
  {%- if order_by == 'auto' -%}
    {%- set order_by = 'raw_order' if envelope in ('row', 'key_only') else 'updated' -%}
  {%- endif -%}
  {%- set default_table = cfg.get('source_table') -%}
  {{ return({
      'envelope': envelope,
      'order_by': order_by,
      'source_table': (default_table | string | trim) if default_table else none,
      'event_op_column': cfg.get('event_op_column') or none,
      'previous_row_column': cfg.get('previous_row_column') or none,
  }) }}
{%- endmacro %}

{#- SQL expression: the configured primary-key column names of a source table in DECLARED order
    (the order of CockroachDB's key array), or null when the table has none configured. The table
    name from the message is compared with configuration literals only. -#}
{% macro _cockroachdb_primary_key_names(source_table_expr) -%}
  {%- set configured = spark_cdc._configured_primary_keys() -%}
  {%- if configured -%}
  case
    {%- for name, pk in configured %}
    when {{ source_table_expr }} = {{ spark_cdc._sql_string(name) }}
      then array({% for c in pk | unique %}{{ spark_cdc._sql_string(c) }}{{ ', ' if not loop.last }}{% endfor %})
    {%- endfor %}
  end
  {%- else -%}
  cast(null as array<string>)
  {%- endif -%}
{%- endmacro %}
