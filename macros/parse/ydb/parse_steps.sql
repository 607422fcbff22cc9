{#- Parse step: the raw rows of `raw_cte` plus `j`, the message parsed once with one explicit schema
    that covers both modes (null over max_payload_bytes); on Spark 3.5 (`spark3`) through
    _ydb_exact_members. Envelope scalars are read as strings (numbers keep their spelling), so a number
    sent as text or the reverse never makes the envelope corrupt. Key components and image values are
    read as VARIANT: each keeps its JSON type (a Json column's string value stays a string) and every
    digit. `ts`/`resolved` are [step, txId] arrays; Debezium-compatible records wrap everything in
    `payload`. -#}
{% macro _ydb_parsed(raw_cte, spark3) -%}
  {%- set member = 'string' if spark3 else 'variant' -%}
  {%- set image = 'map<string, ' ~ member ~ '>' -%}
  {%- set message_schema -%}
struct<key: array<{{ member }}>, `update`: {{ image }}, `reset`: {{ image }}, erase: {{ image }}, newImage: {{ image }}, oldImage: {{ image }}, ts: array<string>, resolved: array<string>, payload: struct<op: string, before: {{ image }}, after: {{ image }}, source: struct<connector: string, version: string, ts_ms: string, step: string, txId: string, snapshot: string>>, _corrupt: string>
  {%- endset %}
  {%- set parsed -%}
      {{ spark_cdc._bounded_from_json('r.raw_value', message_schema) }}
  {%- endset %}
  {%- if spark3 %}
    {{ spark_cdc._ydb_exact_members(parsed, raw_cte) }}
  {%- else %}
    select
      r.*,
      {{ parsed }} as j
    from {{ raw_cte }} as r
  {%- endif %}
{%- endmacro %}

{#- Mode step: is_debezium, the JSON mode's operation flags, op_raw and the virtual timestamp
    (step, txId) of a message (`input_cte`: _ydb_parsed). -#}
{% macro _ydb_mode(input_cte) -%}
    select
      p.*,
      p.j.payload is not null as is_debezium,
      {#- JSON mode carries exactly one operation flag: update, reset (REPLACE) or erase. -#}
      (case when p.j.`update` is not null then 1 else 0 end
       + case when p.j.`reset` is not null then 1 else 0 end
       + case when p.j.erase is not null then 1 else 0 end) as json_op_flags,
      case when p.j.payload is not null then p.j.payload.op
           when p.j.erase is not null then 'erase'
           when p.j.`reset` is not null then 'reset'
           when p.j.`update` is not null then 'update' end as op_raw,
      case when p.j.payload is not null then p.j.payload.source.step else try_element_at(p.j.ts, 1) end as vt_step,
      case when p.j.payload is not null then p.j.payload.source.txId else try_element_at(p.j.ts, 2) end as vt_tx
    from {{ input_cte }} as p
{%- endmacro %}

{#- Key step: pk_columns (configured, sorted; in Debezium-compatible mode else the message key's),
    their values and, in JSON mode, the key components as members; the canonical key (`settings`:
    _ydb_settings; `input_cte`: _ydb_mode). JSON mode's `key` is positional in the table's declared
    key order; values are in sorted-name order, as text (the canonical key) and as the JSON values
    they are (the images). -#}
{% macro _ydb_keyed(input_cte, settings, spark3) -%}
  {%- set member = 'string' if spark3 else 'variant' -%}
  {%- set pk = settings.primary_key -%}
  {%- set pk_sorted = pk | sort -%}
  {#- Configured key columns, sorted (the canonical key's order); null when none are configured. -#}
  {%- set pk_sorted_arr -%}
    {%- if pk -%}array({% for c in pk_sorted %}{{ spark_cdc._sql_string(c) }}{{ ', ' if not loop.last }}{% endfor %})
    {%- else -%}cast(null as array<string>){%- endif -%}
  {%- endset -%}
  {#- JSON mode: `key` is positional in the table's declared key order; values in sorted-name order,
      as text (the canonical key) and as the JSON values they are (the images). -#}
  {%- set json_key_values -%}
    {%- if pk -%}array({% for c in pk_sorted %}{{ spark_cdc._cdc_member_string('try_element_at(k.j.key, ' ~ (pk.index(c) + 1) ~ ')') }}{{ ', ' if not loop.last }}{% endfor %})
    {%- else -%}cast(null as array<string>){%- endif -%}
  {%- endset -%}
  {%- set json_key_members -%}
    {%- if pk -%}array({% for c in pk_sorted %}try_element_at(k.j.key, {{ pk.index(c) + 1 }}){{ ', ' if not loop.last }}{% endfor %})
    {%- else -%}cast(null as array<{{ member }}>){%- endif -%}
  {%- endset -%}
  {%- set key_map = spark_cdc._debezium_key_map('k.raw_key') %}
    select
      m.*,
      {{ spark_cdc.canonical_key('m.pk_columns', 'm.pk_values') }} as canonical_key
    from (
      select
        k.*,
        case when k.is_debezium
             then {% if pk %}{{ pk_sorted_arr }}{% else %}array_sort(map_keys({{ key_map }})){% endif %}
             else {{ pk_sorted_arr }} end as pk_columns,
        case when k.is_debezium
             then {{ spark_cdc.key_values(
                    ('' ~ pk_sorted_arr if pk else 'array_sort(map_keys(' ~ key_map ~ '))'),
                    "transform_values(coalesce(k.j.payload.after, k.j.payload.before), (c, v) -> " ~ spark_cdc._cdc_member_string('v') ~ ")", key_map) }}
             else {{ json_key_values }} end as pk_values,
        case when not k.is_debezium then {{ json_key_members }} end as pk_members
      from {{ input_cte }} as k
    ) as m
{%- endmacro %}

{#- Images step: key_map (the key columns as image members), the new and old images and whether the
    new one is full (`input_cte`: _ydb_keyed). -#}
{% macro _ydb_images(input_cte) -%}
    select
      k.*,
      {#- The key columns as image members: JSON mode's key components, else the image's own
          members (the message key's values, as strings, where the image lacks them). -#}
      case when k.canonical_key is null then null
           when k.is_debezium then map_from_arrays(k.pk_columns, transform(k.pk_columns, (c, i) ->
             coalesce(try_element_at(coalesce(k.j.payload.after, k.j.payload.before), c), {{ spark_cdc._cdc_string_member('element_at(k.pk_values, i + 1)') }})))
           else map_from_arrays(k.pk_columns, k.pk_members) end as key_map,
      {#- The image that becomes `after`: JSON newImage (full), reset (full) or update (the written
          columns); Debezium after. Key columns are left out and merged back from the key. -#}
      case when k.is_debezium then k.j.payload.after
           else coalesce(k.j.newImage, k.j.`reset`, k.j.`update`) end as new_image,
      case when k.is_debezium then k.j.payload.before else k.j.oldImage end as old_image,
      case when k.is_debezium then k.j.payload.after is not null
           else k.j.newImage is not null or k.j.`reset` is not null end as is_full_image
    from {{ input_cte }} as k
{%- endmacro %}

{#- Classification step: `reason_code` of a message (`settings`: _ydb_settings; `input_cte`:
    _ydb_images), null for a change: the shared checks (_common_early_reason), then resolved barriers,
    operations, repeated names, virtual timestamps and the key. -#}
{% macro _ydb_classified(input_cte, settings, spark3) -%}
  {%- set pk = settings.primary_key %}
    select
      c.*,
      case
        {{ spark_cdc._common_early_reason('c', 'malformed_json') }}
        when not c.is_debezium and c.j.resolved is not null and c.j.key is null and c.json_op_flags = 0 then 'resolved'
        when c.is_debezium and (c.op_raw is null or c.op_raw not in ('c', 'u', 'd', 'r')) then 'unknown_op'
        when not c.is_debezium and c.json_op_flags = 0 then 'unknown_op'
        when not c.is_debezium and c.json_op_flags > 1 then 'invalid_envelope'
        when {{ spark_cdc._ydb_repeated_names('c', spark3) }} then 'invalid_envelope'
        when not c.is_debezium and c.j.ts is not null and size(c.j.ts) != 2 then 'invalid_envelope'
        {#- A virtual timestamp is two unsigned 64-bit integers (step, txId). #}
        when not c.is_debezium and c.j.ts is not null
             and exists(c.j.ts, x -> not {{ spark_cdc._integer_in_range('x', 0, '18446744073709551615') }}) then 'invalid_sequence'
        when c.is_debezium and ((c.vt_step is not null and not {{ spark_cdc._integer_in_range('c.vt_step', 0, '18446744073709551615') }})
                                or (c.vt_tx is not null and not {{ spark_cdc._integer_in_range('c.vt_tx', 0, '18446744073709551615') }})) then 'invalid_sequence'
        when not c.is_debezium and c.j.key is null then 'missing_key'
        when not c.is_debezium and size(c.j.key) != {{ pk | length }} then 'missing_key'
        when c.canonical_key is null then 'missing_key'
        when c.vt_step is null and c.raw_order is null then 'missing_sequence'
      end as reason_code
    from {{ input_cte }} as c
{%- endmacro %}

{#- Final step of parse_ydb: the staged-row columns of a classified message (`settings`:
    _ydb_settings; `input_cte`: _ydb_classified). -#}
{% macro _ydb_staged_row(input_cte, settings, spark3) -%}
  {%- set member = 'string' if spark3 else 'variant' -%}
  {%- set table_lit = spark_cdc._sql_string(settings.source_table) -%}
  {%- set type_hints -%}
    {%- if settings.column_types -%}
    map({% for c, t in settings.column_types.items() | sort %}{{ spark_cdc._sql_string(c) }}, {{ spark_cdc._sql_string(tojson({'type': t | string})) }}{{ ', ' if not loop.last }}{% endfor %})
    {%- else -%}cast(null as map<string, string>){%- endif -%}
  {%- endset -%}
  {%- set image = 'map<string, ' ~ member ~ '>' %}
  select
    'ydb' as cdc_format,
    {{ table_lit }} as source_table,
    case
      when d.op_raw in ('erase', 'd') then 'delete'
      when d.op_raw = 'c' then 'insert'
      when d.op_raw = 'r' then 'snapshot'
      {#- An old image means the row existed; without one YDB does not say insert from update. #}
      when d.old_image is not null then 'update'
      else 'upsert'
    end as op,
    d.op_raw,
    d.canonical_key as key,
    {#- An old image carries no key columns (they are the record's key): YDB cannot change a key in
        one record. #}
    cast(null as string) as before_key,
    case when d.reason_code is null and d.op_raw not in ('erase', 'd') then {{ spark_cdc._cdc_members_object_json("map_concat(
      d.key_map,
      map_filter(coalesce(d.new_image, cast(map() as " ~ image ~ ")), (col, v) -> not array_contains(d.pk_columns, col)))") }}
    end as after,
    case when d.reason_code is null and (d.old_image is not null or d.op_raw in ('erase', 'd')) then {{ spark_cdc._cdc_members_object_json("map_concat(
      d.key_map,
      map_filter(coalesce(d.old_image, cast(map() as " ~ image ~ ")), (col, v) -> not array_contains(d.pk_columns, col)))") }}
    end as before,
    {#- UPDATES mode (and keys-only / old-image records) carry only some columns: those plus the key. -#}
    case when d.reason_code is null and d.op_raw not in ('erase', 'd') and not d.is_full_image
         then array_sort(array_union(d.pk_columns, map_keys(coalesce(d.new_image, cast(map() as {{ image }})))))
    end as present_columns,
    case when d.reason_code is null and not d.is_debezium and d.op_raw = 'update'
              and d.j.newImage is null and d.j.oldImage is null and size(d.j.`update`) > 0
         then array_sort(map_keys(d.j.`update`))
    end as changed_columns,
    {#- Virtual timestamp (step, txId) orders changes across partitions; without it only the raw
        order within a partition is known (YDB keeps one key's changes in one partition, in order). -#}
    case when d.vt_step is not null
         then named_struct('s1', try_cast(d.vt_step as decimal(38,0)), 's2', try_cast(d.vt_tx as decimal(38,0)),
                           's3', cast(null as decimal(38,0)))
         else named_struct('s1', cast(null as decimal(38,0)), 's2', cast(null as decimal(38,0)), 's3', d.raw_order)
    end as seq,
    case when d.is_debezium
         then coalesce({{ spark_cdc._epoch_ms_to_timestamp('d.j.payload.source.ts_ms') }},
                       {{ spark_cdc._epoch_ms_to_timestamp('d.vt_step') }})
         else {{ spark_cdc._epoch_ms_to_timestamp('d.vt_step') }}
    end as commit_ts,
    cast(null as timestamp) as emitted_at,
    d.vt_tx as tx_id,
    case when d.is_debezium
         then d.op_raw = 'r' or coalesce(lower(d.j.payload.source.snapshot) = 'true', false)
         else false end as is_snapshot,
    {{ type_hints }} as type_hints,
    {{ spark_cdc._raw_lineage_select_list('d') }},
    case when d.reason_code = 'resolved' then 'skipped'
         when d.reason_code is not null then 'quarantined'
         else 'change' end as record_status,
    d.reason_code,
    {{ spark_cdc._ydb_reason_detail('d', settings, spark3) }} as reason_detail
  from {{ input_cte }} as d
{%- endmacro %}

{#- SQL expression: the reason_detail of a classified YDB message, row alias `a` (`settings`:
    _ydb_settings). -#}
{% macro _ydb_reason_detail(a, settings, spark3) -%}
  {%- set pk = settings.primary_key -%}
  {%- set table_lit = spark_cdc._sql_string(settings.source_table) %}
    case {{ a }}.reason_code
      when 'resolved' then concat('resolved barrier step=', coalesce(substr(try_element_at({{ a }}.j.resolved, 1), 1, 40), 'null'))
      when 'unknown_op' then concat('op=', coalesce(substr({{ a }}.op_raw, 1, 40), 'null (no update, reset or erase field)'))
      when 'invalid_envelope' then case
        when {{ a }}.json_op_flags > 1 then 'more than one of update, reset, erase'
        when {{ spark_cdc._ydb_repeated_names(a, spark3) }} then 'a row image names a column twice (which value it means is undefined)'
        when {{ a }}.j._corrupt is null then 'ts, step or txId is not a number pair'
        else 'an envelope field has the wrong JSON type' end
      when 'malformed_json' then case when {{ spark_cdc._raw_value_is_empty(a ~ '.raw_value') }}
        then 'empty value (YDB changefeeds send no tombstones)' else 'not a JSON object' end
      when 'payload_too_large' then {{ spark_cdc._payload_too_large_detail(a ~ '.raw_value') }}
      when 'missing_key' then
      {%- if pk %}
        case when not {{ a }}.is_debezium and {{ a }}.j.key is not null and size({{ a }}.j.key) != {{ pk | length }}
             then concat('key has ', size({{ a }}.j.key), ' components; primary_key of ', {{ table_lit }}, ' declares {{ pk | length }}')
             else 'no value for a primary-key column (YDB key components may not be null here)' end
      {%- else %}
        concat('configure var spark_cdc.tables[', {{ table_lit }}, '].primary_key (key columns in declared order)')
      {%- endif %}
      when 'missing_sequence' then 'no virtual timestamp and no raw order value'
      when 'invalid_sequence' then concat('step=', coalesce(substr({{ a }}.vt_step, 1, 40), 'null'), ', txId=', coalesce(substr({{ a }}.vt_tx, 1, 40), 'null'),
                                          ': a virtual timestamp is two unsigned 64-bit integers')
    end
{%- endmacro %}

{#- SQL boolean: a row image (of row `alias`) names a column twice. On Spark 3.5 the message was read
    by spark_cdc_json_members, which is null when a name repeats anywhere in an image. -#}
{% macro _ydb_repeated_names(alias, spark3) -%}
  {%- if spark3 -%}
  {{ alias }}._repeated_names
  {%- else -%}
  (size(map_keys({{ alias }}.new_image)) != size(array_distinct(map_keys({{ alias }}.new_image)))
   or size(map_keys({{ alias }}.old_image)) != size(array_distinct(map_keys({{ alias }}.old_image))))
  {%- endif -%}
{%- endmacro %}

{#- Spark 3.5 form of parse_ydb's first step (the raw rows plus `j`, the parsed message): its
    from_json reads images and key components as strings, which loses digits (1.50 becomes 1.5), so
    they are replaced by the exact members of the message text (spark_cdc_json_members /
    spark_cdc_json_elements: Spark 4's VARIANT text). `_repeated_names`: the envelope parsed but a
    name repeats inside it. -#}
{% macro _ydb_exact_members(parsed, raw_cte) -%}
  {%- set fields = ['update', 'reset', 'erase', 'newImage', 'oldImage'] -%}
    select
      p.*,
      named_struct(
        'key', case when p.j0.key is not null then spark_cdc_json_elements(p.m['key']) end,
        {%- for f in fields %}
        {{ spark_cdc._sql_string(f) }}, case when p.j0.{{ spark_cdc.quote_identifier(f) }} is not null then spark_cdc_json_members(p.m[{{ spark_cdc._sql_string(f) }}]) end,
        {%- endfor %}
        'ts', p.j0.ts,
        'resolved', p.j0.resolved,
        'payload', case when p.j0.payload is not null then named_struct(
          'op', p.j0.payload.op,
          'before', case when p.j0.payload.before is not null then spark_cdc_json_members(p.pm['before']) end,
          'after', case when p.j0.payload.after is not null then spark_cdc_json_members(p.pm['after']) end,
          'source', p.j0.payload.source) end,
        '_corrupt', p.j0._corrupt
      ) as j,
      p.j0 is not null and p.j0._corrupt is null and p.m is null as _repeated_names
    from (
      select q.*, spark_cdc_json_members(q.m['payload']) as pm
      from (
        select r.*, {{ parsed }} as j0,
               spark_cdc_json_members(case when {{ spark_cdc._payload_within_limit('r.raw_value') }} then r.raw_value end) as m
        from {{ raw_cte }} as r
      ) as q
    ) as p
{%- endmacro %}

{#- The YDB options of the staging model, validated at compile time: the source table (YDB
    messages do not name their table), its primary key in declared order and optional YDB column
    types (emitted as type_hints). -#}
{% macro _ydb_settings() -%}
  {%- set cfg = spark_cdc.format_config('ydb') -%}
  {%- set table = cfg.get('source_table') -%}
  {%- set where = "spark_cdc: model '" ~ (model.name if model is defined and model else 'stg_cdc__ydb') ~ "' (format ydb)" -%}
  {%- if not spark_cdc.format_enabled('ydb') -%}
    {#- A disabled format's staging model is still rendered when dbt parses: nothing to check. -#}
    {{ return({'source_table': none, 'primary_key': [], 'column_types': {}}) }}
  {%- endif -%}
  {%- if not table or table is not string -%}
    {% set msg %}
{{ where }}: var('spark_cdc').formats.ydb.source_table is not set (got: {{ table }}); YDB changefeed messages do not name their table.
Fix: set formats.ydb.source_table to the path of the table whose changefeed lands in this raw relation (for example '/Root/shop/orders'), and its key columns, in the table's declared order, under var('spark_cdc').tables['<that path>'].primary_key.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set tcfg = spark_cdc.table_config(table) -%}
  {%- set pk = tcfg.get('primary_key') or [] -%}
  {%- set pk = [pk] if pk is string else (pk | list) -%}
  {%- if pk | unique | list | length != pk | length -%}
    {{ exceptions.raise_compiler_error(where ~ ": var('spark_cdc').tables['" ~ table ~ "'].primary_key lists a column twice (" ~ pk ~ "). Fix: list each key column once, in the table's declared order.") }}
  {%- endif -%}
  {%- set types = tcfg.get('ydb_column_types') or {} -%}
  {%- if types is not mapping -%}
    {{ exceptions.raise_compiler_error(where ~ ": var('spark_cdc').tables['" ~ table ~ "'].ydb_column_types must map column names to YDB type names; got " ~ types ~ ". Fix: give a mapping, for example {created: Datetime64, amount: 'Decimal(22,9)'}.") }}
  {%- endif -%}
  {{ return({'source_table': table, 'primary_key': pk, 'column_types': types}) }}
{%- endmacro %}
