{#- Parse step: the raw rows of `raw_cte` plus `j`, the Qlik message parsed once with an explicit
    schema that reads it with the Replicate envelope (magic/type/message) or without it (the bare
    message). Scalars are read as strings (numbers keep their spelling) and converted with try_cast,
    so a number sent as text never turns the whole message into a corrupt record. -#}
{% macro _qlik_parsed(raw_cte) -%}
  {%- set headers_type -%}
struct<operation: string, changeSequence: string, timestamp: string, streamPosition: string, transactionId: string, changeMask: string, columnMask: string, externalSchemaId: string, transactionEventCounter: string, transactionLastEvent: string>
  {%- endset -%}
  {%- set column_type -%}
struct<ordinal: string, type: string, length: string, precision: string, scale: string, primaryKeyPosition: string, nullable: string>
  {%- endset -%}
  {%- set message_fields -%}
data: string, beforeData: string, headers: {{ headers_type }}, `schema`: string, `table`: string,
schemaId: string, lineage: struct<server: string, task: string, `schema`: string, `table`: string, tableVersion: string, timestamp: string>,
tableStructure: struct<tableColumns: map<string, {{ column_type }}>>, dataSchema: string
  {%- endset -%}
  {#- With the Replicate envelope (magic/type/message) or without it (the bare message). -#}
  {%- set message_schema -%}
struct<magic: string, type: string, messageSchemaId: string, message: struct<{{ message_fields }}>, {{ message_fields }}, _corrupt: string>
  {%- endset -%}
    select
      r.*,
      {{ spark_cdc._bounded_from_json('r.raw_value', message_schema) }} as j
    from {{ raw_cte }} as r
{%- endmacro %}

{#- Envelope step: `m`, the message inside the Replicate envelope, or the bare message (`input_cte`:
    _qlik_parsed). -#}
{% macro _qlik_envelope(input_cte) -%}
    select
      p.*,
      case when p.j.message is not null then p.j.message
           else named_struct('data', p.j.data, 'beforeData', p.j.beforeData, 'headers', p.j.headers,
                             'schema', p.j.`schema`, 'table', p.j.`table`, 'schemaId', p.j.schemaId,
                             'lineage', p.j.lineage, 'tableStructure', p.j.tableStructure,
                             'dataSchema', p.j.dataSchema)
      end as m
    from {{ input_cte }} as p
{%- endmacro %}

{#- Typing step: the message type (MD metadata, DT data; inferred when the envelope names none), the
    operation, the masks and the change sequence of a message (`input_cte`: _qlik_envelope). -#}
{% macro _qlik_typed(input_cte) -%}
    select
      e.*,
      upper(coalesce(nullif(trim(e.j.type), ''),
                     case when e.m.tableStructure is not null or e.m.lineage is not null then 'MD'
                          when e.m.headers is not null then 'DT' end)) as message_type,
      upper(trim(e.m.headers.operation)) as operation,
      nullif(trim(e.m.headers.changeMask), '') as change_mask,
      nullif(trim(e.m.headers.columnMask), '') as column_mask,
      nullif(trim(e.m.headers.changeSequence), '') as change_sequence
    from {{ input_cte }} as e
{%- endmacro %}

{#- Fields step: source table (else var formats.qlik_replicate.source_table), the row images as maps,
    a metadata message's columns by ordinal, and masks_valid (hex, at most max_mask_hex_digits digits)
    (`input_cte`: _qlik_typed). -#}
{% macro _qlik_fields(input_cte) -%}
  {%- set cfg = spark_cdc.format_config('qlik_replicate') -%}
  {%- set max_mask_digits = cfg.get('max_mask_hex_digits', 4096) | int -%}
  {%- set default_table = cfg.get('source_table') %}
    select
      t.*,
      case
        when t.message_type = 'MD' then
          case when nullif(t.m.lineage.`table`, '') is not null
               then concat_ws('.', nullif(t.m.lineage.`schema`, ''), t.m.lineage.`table`) end
        when nullif(t.m.`table`, '') is not null then concat_ws('.', nullif(t.m.`schema`, ''), t.m.`table`)
        else {{ spark_cdc._sql_string(default_table) }}
      end as source_table,
      from_json(t.m.data, 'map<string, string>') as data_map,
      from_json(t.m.beforeData, 'map<string, string>') as before_data_map,
      {#- A metadata message's columns, ordered by ordinal. -#}
      array_sort(transform(
        map_entries(t.m.tableStructure.tableColumns),
        c -> named_struct(
          'ordinal', try_cast(c.value.ordinal as int),
          'name', c.key,
          'type', c.value.type,
          'length', try_cast(c.value.length as bigint),
          'precision', try_cast(c.value.precision as int),
          'scale', try_cast(c.value.scale as int),
          'primary_key_position', try_cast(c.value.primaryKeyPosition as int),
          'nullable', try_cast(c.value.nullable as boolean)))) as md_columns,
      (t.change_mask is null or (t.change_mask rlike '^[0-9A-Fa-f]+$' and length(t.change_mask) <= {{ max_mask_digits }}))
        and (t.column_mask is null or (t.column_mask rlike '^[0-9A-Fa-f]+$' and length(t.column_mask) <= {{ max_mask_digits }}))
        as masks_valid
    from {{ input_cte }} as t
{%- endmacro %}

{#- Images step: the image that carries the key, the before text and the mask ordinals of a message
    (`input_cte`: _qlik_fields). -#}
{% macro _qlik_images(input_cte) -%}
    select
      f.*,
      {#- DELETE carries the deleted row in beforeData or in data (Replicate versions differ). -#}
      case when f.operation = 'DELETE' then coalesce(f.before_data_map, f.data_map) else f.data_map end as image_map,
      case when f.operation = 'DELETE' then coalesce(f.m.beforeData, f.m.data) else f.m.beforeData end as before_text,
      case when f.masks_valid then {{ spark_cdc._qlik_mask_ordinals('f.change_mask') }} end as change_ordinals,
      case when f.masks_valid then {{ spark_cdc._qlik_mask_ordinals('f.column_mask') }} end as column_ordinals
    from {{ input_cte }} as f
{%- endmacro %}

{#- Table-version step: the CTEs qlik_known_metadata (every table version known to this run: usable
    metadata messages of `fields_cte`, _qlik_fields, and the skipped `metadata` rows of
    `md_relation` when not none) and qlik_versions_by_table (one row per source table, its versions). -#}
{% macro _qlik_known_versions(fields_cte, md_relation) -%}
  {%- set registry_schema = spark_cdc.qlik_replicate_metadata_schema() %}
  {#- Every table version known to this run: metadata messages of this batch and those staged
      earlier. A data message names no table version; the version that describes it is found by
      its columns (below). -#}
  {#- Only a message whose text names tableStructure (or spells a name with a \u escape) can be a
      usable metadata message, so the others are not parsed a second time for this branch. The test
      is the CASE's condition, not a conjunct of the WHERE: from a conjunct on the parsed columns,
      Spark infers not-null filters on the parse and places them first, which parsed every message
      (half the Qlik staging time). It reads raw_text, the value as landed, not raw_value: raw_value
      is the checked value (spark_cdc._checked_raw_value, a second JSON parse of every message), and
      Spark evaluated it for every message to test its text. The two differ only for a value that
      cannot be one JSON text, which is no metadata message either way. #}
  qlik_known_metadata as (
    select source_table, try_cast(m.lineage.tableVersion as bigint) as table_version, md_columns as columns,
           raw_partition as md_partition, raw_order as md_order
    from {{ fields_cte }}
    where case when contains(raw_text, 'tableStructure') or contains(raw_text, '\\u')
               then message_type = 'MD' and j._corrupt is null and source_table is not null
                    and {{ spark_cdc._qlik_metadata_columns_valid('md_columns') }}
               else false end
    {%- if md_relation is not none %}
    union all
    select source_table, md.table_version, md.columns, md_partition, md_order
    from (
      select k.source_table, from_json(k.after, {{ spark_cdc._sql_string(registry_schema) }}) as md,
             k.raw_ref.partition as md_partition, k.raw_ref.order as md_order
      from {{ md_relation }} as k
      where k.cdc_format = 'qlik_replicate' and k.record_status = 'skipped' and k.reason_code = 'metadata'
    ) as known
    where md.columns is not null
    {%- endif %}
  ),

  qlik_versions_by_table as (
    select source_table,
           collect_list(named_struct('table_version', table_version, 'columns', columns,
                                     'md_partition', md_partition, 'md_order', md_order,
                                     {#- Once per version, not per message: _qlik_best_version's sets. #}
                                     'names', transform(columns, c -> c.name),
                                     'ordinals', transform(columns, c -> c.ordinal),
                                     'ordinal_names', {{ spark_cdc._qlik_ordinal_names('columns') }},
                                     'type_hints', {{ spark_cdc._qlik_type_hints('columns') }})) as versions
    from qlik_known_metadata
    group by source_table
  )
{%- endmacro %}

{#- Matching step: `md`, the table version that describes a data message (`input_cte`: _qlik_images),
    chosen among `versions_cte` (_qlik_known_versions) by _qlik_best_version. The join is null-safe
    (<=>, with a not-null test on the message's side): from a plain equality Spark infers a not-null
    filter on the versions' source_table and adds it after the known-metadata test, where it parsed
    every message a second time (a quarter of the Qlik staging time). -#}
{% macro _qlik_matched(input_cte, versions_cte) -%}
    select /*+ broadcast(v) */
      i.*,
      try_element_at(v.versions, {{ spark_cdc._qlik_best_version('v.versions', 'i.image_map', 'i.change_ordinals', 'i.column_ordinals') }} + 1) as md
    from {{ input_cte }} as i
    left join {{ versions_cte }} as v
      on i.message_type = 'DT' and i.source_table is not null and i.source_table <=> v.source_table
{%- endmacro %}

{#- Key step: pk_columns (configured tables.<schema.table>.primary_key, else the metadata's
    primaryKeyPosition columns) and the canonical key of a message (`input_cte`: _qlik_matched). -#}
{% macro _qlik_keyed(input_cte) -%}
    select
      k.*,
      {{ spark_cdc.canonical_key('k.pk_columns', "transform(k.pk_columns, c -> try_element_at(k.image_map, c))") }} as canonical_key
    from (
      {#- Primary key: configured tables.<schema.table>.primary_key, else the metadata's
          primaryKeyPosition columns. -#}
      select
        y.*,
        coalesce(y.configured_pk,
          case when size(filter(y.md.columns, c -> c.primary_key_position > 0)) > 0
               then array_sort(transform(filter(y.md.columns, c -> c.primary_key_position > 0), c -> c.name)) end
        ) as pk_columns
      from (
        select
          x.*,
          {#- A CASE needs at least one WHEN: without configured tables, no configured key. #}
          {%- set keyed = spark_cdc._configured_primary_keys() -%}
          {%- if keyed %}
          case
          {%- for name, pk in keyed %}
            when x.source_table = {{ spark_cdc._sql_string(name) }}
              then array({% for c in pk | unique | sort %}{{ spark_cdc._sql_string(c) }}{{ ', ' if not loop.last }}{% endfor %})
          {%- endfor %}
            else cast(null as array<string>)
          end as configured_pk
          {%- else %}
          cast(null as array<string>) as configured_pk
          {%- endif %}
        from {{ input_cte }} as x
      ) as y
    ) as k
{%- endmacro %}

{#- Classification step: `reason_code` of a message (`input_cte`: _qlik_keyed), null for a change.
    Unlike the other formats, an over-long value is payload_too_large even when it is blank. -#}
{% macro _qlik_classified(input_cte) -%}
    select
      c.*,
      case
        when {{ spark_cdc._payload_too_large('c.raw_value') }} then 'payload_too_large'
        when {{ spark_cdc._raw_value_is_empty('c.raw_value') }} or c.j is null then 'malformed_json'
        {{ spark_cdc._corrupt_envelope_reason('c') }}
        when c.message_type = 'MD' and c.source_table is null then 'missing_source_table'
        when c.message_type = 'MD' and not {{ spark_cdc._qlik_metadata_columns_valid('c.md_columns') }} then 'invalid_envelope'
        when c.message_type = 'MD' then 'metadata'
        when c.message_type is null or c.message_type != 'DT' or c.m.headers is null then 'invalid_envelope'
        when c.operation is null or c.operation not in ('INSERT', 'UPDATE', 'DELETE', 'REFRESH') then 'unknown_op'
        when c.operation != 'DELETE' and c.data_map is null then 'invalid_envelope'
        when c.operation = 'DELETE' and c.image_map is null then 'invalid_envelope'
        when c.m.beforeData is not null and c.before_data_map is null then 'invalid_envelope'
        when {{ spark_cdc._image_names_a_column_twice('c.m.data') }} or {{ spark_cdc._image_names_a_column_twice('c.m.beforeData') }} then 'invalid_envelope'
        when not c.masks_valid then 'invalid_envelope'
        when c.source_table is null then 'missing_source_table'
        when c.operation != 'REFRESH' and c.change_sequence is null then 'missing_sequence'
        {#- changeSequence is Replicate's 35-digit position; transactionEventCounter a count. #}
        when c.operation != 'REFRESH' and not coalesce(c.change_sequence rlike '^[0-9]{1,35}$', false) then 'invalid_sequence'
        when c.operation != 'REFRESH' and nullif(trim(c.m.headers.transactionEventCounter), '') is not null
             and not {{ spark_cdc._integer_in_range('c.m.headers.transactionEventCounter', 0, '18446744073709551615') }} then 'invalid_sequence'
        when c.md is null and (c.change_mask is not null or c.column_mask is not null or c.configured_pk is null) then 'missing_metadata'
        when c.canonical_key is null then 'missing_key'
      end as reason_code
    from {{ input_cte }} as c
{%- endmacro %}

{#- Step: the column names of a data message's table version, and those its columnMask marks
    (`input_cte`: _qlik_classified). -#}
{% macro _qlik_changes(input_cte) -%}
    select
      d.*,
      case when d.md is not null then transform(d.md.columns, c -> c.name) end as md_names,
      case when d.md is not null and d.column_ordinals is not null
           then {{ spark_cdc._qlik_names_of_ordinals('d.md', 'd.column_ordinals') }} end as masked_present
    from {{ input_cte }} as d
{%- endmacro %}

{#- Final step of parse_qlik_replicate: the staged-row columns of a classified message (`input_cte`:
    _qlik_changes). -#}
{% macro _qlik_staged_row(input_cte) -%}
  select
    'qlik_replicate' as cdc_format,
    q.source_table,
    case when q.message_type = 'DT' then
      case q.operation when 'INSERT' then 'insert' when 'UPDATE' then 'update' when 'DELETE' then 'delete'
                       when 'REFRESH' then 'snapshot' end
    end as op,
    case when q.message_type = 'MD' then 'MD' else substr(q.m.headers.operation, 1, 40) end as op_raw,
    q.canonical_key as key,
    {#- An UPDATE whose beforeData names another key changed the primary key. #}
    case when q.message_type = 'DT' and q.operation = 'UPDATE' and q.before_data_map is not null
         then {{ spark_cdc._before_key('q.pk_columns', 'q.before_data_map', 'q.canonical_key') }} end as before_key,
    case
      when q.message_type = 'MD' and q.reason_code = 'metadata' then to_json(named_struct(
        'table_version', try_cast(q.m.lineage.tableVersion as bigint),
        'schema_id', q.m.schemaId,
        'server', q.m.lineage.server,
        'task', q.m.lineage.task,
        'timestamp', q.m.lineage.timestamp,
        'columns', q.md_columns,
        'data_schema', q.m.dataSchema))
      when q.operation != 'DELETE' then q.m.data
    end as after,
    case when q.message_type = 'DT' then q.before_text end as before,
    {#- Columns the after image really carries: those the columnMask marks (a column the source could
        not capture is absent, not null), and only those the image has; null = every column. -#}
    case
      when q.message_type != 'DT' or q.operation = 'DELETE' or q.md_names is null then null
      when size(array_intersect(coalesce(q.masked_present, q.md_names), map_keys(q.data_map))) = size(q.md_names) then null
      else array_sort(array_intersect(coalesce(q.masked_present, q.md_names), map_keys(q.data_map)))
    end as present_columns,
    case when q.operation in ('INSERT', 'UPDATE') and q.md is not null and q.change_ordinals is not null
         then array_sort({{ spark_cdc._qlik_names_of_ordinals('q.md', 'q.change_ordinals') }})
    end as changed_columns,
    {#- changeSequence (35 digits) then transactionEventCounter. A full-load (REFRESH) row has no
        sequence: it orders before every change (s1 = 0), full-load rows of one key by landing order. -#}
    named_struct(
      's1', case when q.message_type != 'DT' then null
                 when q.operation = 'REFRESH' then cast(0 as decimal(38,0))
                 when q.change_sequence rlike '^[0-9]{1,38}$' then cast(q.change_sequence as decimal(38,0)) end,
      's2', case when q.message_type != 'DT' then null
                 when q.operation = 'REFRESH' then cast(0 as decimal(38,0))
                 when trim(q.m.headers.transactionEventCounter) rlike '^[0-9]{1,38}$'
                   then cast(trim(q.m.headers.transactionEventCounter) as decimal(38,0)) end,
      's3', case when q.message_type = 'DT' and q.operation = 'REFRESH' then q.raw_order end
    ) as seq,
    {{ spark_cdc._qlik_utc_timestamp("case when q.message_type = 'MD' then q.m.lineage.timestamp else q.m.headers.timestamp end") }} as commit_ts,
    cast(null as timestamp) as emitted_at,
    case when q.message_type = 'DT' then nullif(trim(q.m.headers.transactionId), '') end as tx_id,
    coalesce(q.operation = 'REFRESH' and q.message_type = 'DT', false) as is_snapshot,
    case
      when q.message_type = 'MD' and q.reason_code = 'metadata' then {{ spark_cdc._qlik_type_hints('q.md_columns') }}
      when q.md is not null then q.md.type_hints
    end as type_hints,
    {{ spark_cdc._raw_lineage_select_list('q') }},
    case when q.reason_code = 'metadata' then 'skipped'
         when q.reason_code is not null then 'quarantined'
         else 'change' end as record_status,
    q.reason_code,
    {{ spark_cdc._qlik_reason_detail('q') }} as reason_detail
  from {{ input_cte }} as q
{%- endmacro %}

{#- SQL expression: the reason_detail of a classified Qlik message, row alias `a` (_qlik_staged_row). -#}
{% macro _qlik_reason_detail(a) -%}
  {%- set max_mask_digits = spark_cdc.format_config('qlik_replicate').get('max_mask_hex_digits', 4096) | int %}
    case {{ a }}.reason_code
      when 'metadata' then concat('table version ', coalesce({{ a }}.m.lineage.tableVersion, 'null'))
      when 'payload_too_large' then {{ spark_cdc._payload_too_large_detail(a ~ '.raw_value') }}
      when 'unknown_op' then concat('operation=', coalesce(substr({{ a }}.m.headers.operation, 1, 40), 'null'))
      when 'invalid_envelope' then
        case
          when {{ a }}.j._corrupt is not null then 'a message field has the wrong JSON type'
          when {{ a }}.message_type = 'MD' then 'metadata tableColumns missing or ordinals not distinct positive integers'
          when {{ a }}.message_type is null or {{ a }}.message_type != 'DT' then concat('message type=', coalesce(substr({{ a }}.j.type, 1, 20), 'null'))
          when {{ a }}.m.headers is null then 'data message without headers'
          when not {{ a }}.masks_valid then 'changeMask/columnMask is not a hex string of at most {{ max_mask_digits }} digits'
          when {{ spark_cdc._image_names_a_column_twice(a ~ '.m.data') }} or {{ spark_cdc._image_names_a_column_twice(a ~ '.m.beforeData') }} then 'a row image names a column twice (which value it means is undefined)'
          else 'row image (data/beforeData) missing or not a JSON object'
        end
      when 'missing_source_table' then 'the message names no table; set var spark_cdc.formats.qlik_replicate.source_table'
      when 'missing_sequence' then concat('changeSequence=', coalesce(substr({{ a }}.m.headers.changeSequence, 1, 60), 'null'))
      when 'invalid_sequence' then concat('changeSequence=', coalesce(substr({{ a }}.m.headers.changeSequence, 1, 60), 'null'),
        ', transactionEventCounter=', coalesce(substr({{ a }}.m.headers.transactionEventCounter, 1, 40), 'null'),
        ': changeSequence is up to 35 digits, transactionEventCounter a non-negative integer')
      when 'missing_metadata' then concat('no metadata message of ', {{ a }}.source_table,
        ' has the columns of this message; retried by stg_cdc__qlik_replicate_retried when it arrives')
      when 'missing_key' then 'no primary-key value: metadata has no primaryKeyPosition and var spark_cdc.tables[<schema.table>].primary_key is not set, or a key column is null'
    end
{%- endmacro %}

{#- SQL expression: the 1-based column ordinals whose bits a Qlik mask sets. The mask is hex text of
    a little-endian bitmask: its last digit holds ordinals 1-4 (bit 0 = ordinal 1), the digit before
    it ordinals 5-8, and so on, so any width decodes the same way ("0B" -> 1, 2, 4). A digit's value
    is its position in '0123456789abcdef' (masks_valid admits hex digits only): conv() per bit
    boxed every digit and was in a seventh of the profile samples of Qlik's main stage. -#}
{% macro _qlik_mask_ordinals(mask_expr) -%}
  case when {{ mask_expr }} is not null then
    filter(
      sequence(1, length({{ mask_expr }}) * 4),
      o -> ((instr('0123456789abcdef', lower(substr({{ mask_expr }}, length({{ mask_expr }}) - cast((o - 1) div 4 as int), 1))) - 1)
            & shiftleft(1, cast((o - 1) % 4 as int))) != 0)
  end
{%- endmacro %}

{#- SQL expression: a table version's column names by ordinal (element o is the name of the column
    whose ordinal is o, null where none is). Built once per table version, so that a message's
    masked columns are array lookups (_qlik_names_of_ordinals), not a scan of the version's columns
    per column: that array_contains per column was a fifth of the profile samples of Qlik's main
    stage. Null when the ordinals are sparse (the highest over 4 × the column count + 64): every
    data message carries its version, so the table stays about as large as the columns. -#}
{% macro _qlik_ordinal_names(columns_expr) -%}
  case when array_max(transform({{ columns_expr }}, c -> c.ordinal)) <= 4 * size({{ columns_expr }}) + 64 then
    transform(sequence(1, array_max(transform({{ columns_expr }}, c -> c.ordinal))),
              o -> try_element_at(filter({{ columns_expr }}, c -> c.ordinal = o), 1).name)
  end
{%- endmacro %}

{#- SQL expression: the names of the columns of table version `md_expr` (a _qlik_known_versions
    version) whose ordinals are in `ordinals_expr` (ascending), in ordinal order; by the scan of
    its columns when the version has no ordinal table. -#}
{% macro _qlik_names_of_ordinals(md_expr, ordinals_expr) -%}
  case when {{ md_expr }}.ordinal_names is not null
       then array_compact(transform({{ ordinals_expr }}, o -> try_element_at({{ md_expr }}.ordinal_names, o)))
       else transform(filter({{ md_expr }}.columns, c -> array_contains({{ ordinals_expr }}, c.ordinal)), c -> c.name)
  end
{%- endmacro %}

{#- SQL boolean: a metadata message's columns are usable (non-empty, ordinals distinct and positive). -#}
{% macro _qlik_metadata_columns_valid(columns_expr) -%}
  coalesce(size({{ columns_expr }}) > 0
    and forall({{ columns_expr }}, c -> c.ordinal > 0)
    and size(array_distinct(transform({{ columns_expr }}, c -> c.ordinal))) = size({{ columns_expr }}), false)
{%- endmacro %}

{#- SQL expression: 0-based index in `versions_expr` of the table version that describes a data
    message, or null. A version qualifies when it has every column of the image and every ordinal
    the masks set; an exact column match is preferred, then the highest tableVersion, then the
    latest landed metadata message. Each version carries its column `names` and `ordinals`, so the
    test is two native set differences per version (array_except), not a lambda per image column
    per metadata column: that nested form cost most of the Qlik staging time. -#}
{% macro _qlik_best_version(versions_expr, image_map_expr, change_ordinals_expr, column_ordinals_expr) -%}
  array_max(filter(
    transform({{ versions_expr }}, (v, vi) -> named_struct(
      'qualifies',
        size(array_except(coalesce(map_keys({{ image_map_expr }}), cast(array() as array<string>)), v.names)) = 0
        and size(array_except(array_union(coalesce({{ change_ordinals_expr }}, cast(array() as array<int>)),
                                          coalesce({{ column_ordinals_expr }}, cast(array() as array<int>))),
                              v.ordinals)) = 0,
      'exact', size(v.columns) = size(coalesce(map_keys({{ image_map_expr }}), cast(array() as array<string>))),
      'table_version', coalesce(v.table_version, -1),
      'md_partition', coalesce(v.md_partition, ''),
      'md_order', coalesce(v.md_order, cast(-1 as decimal(38,0))),
      'i', vi)),
    s -> s.qualifies)).i
{%- endmacro %}

{#- SQL expression: map column -> JSON type hint ({"type","length","precision","scale"}) from
    metadata columns. -#}
{% macro _qlik_type_hints(columns_expr) -%}
  map_from_entries(transform({{ columns_expr }},
    c -> struct(c.name, to_json(named_struct('type', c.type, 'length', c.length, 'precision', c.precision, 'scale', c.scale)))))
{%- endmacro %}

{#- SQL expression: a Replicate timestamp ("2023-09-11T03:23:25.000", UTC, no zone) as a timestamp;
    null when absent or not a timestamp. -#}
{% macro _qlik_utc_timestamp(text_expr) -%}
  case when trim({{ text_expr }}) rlike '^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?$'
       then try_cast(concat(replace(trim({{ text_expr }}), ' ', 'T'), 'Z') as timestamp) end
{%- endmacro %}
