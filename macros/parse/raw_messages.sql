{#- Raw rows of a format not yet staged, from every raw relation of the format: the landing contract
    (value, optional key, position columns, optional ingestion-time column) normalised to fixed
    names. raw_value is the value checked to be one JSON text (_checked_raw_value); raw_text is the
    value as landed, for cheap text tests that must not pay for that check (Spark prunes it where
    unused). A record's position is its relation, its group (raw_partition: the position columns
    but the last, e.g. topic and partition) and its order (raw_order: the last position column).
    The watermark is the highest order already staged per relation and group; rows above it are
    new. Rows at or below it that staging has not recorded yet (a sink delivering a record again,
    or a position used again: a recreated topic, a position that leaves out the topic) are found
    by _raw_redelivery_bounds and read again. `raw_digest` identifies a record's content, and
    `raw_delivery` says what a row is: `new`, a `duplicate` (a position's content again) or
    `position_reused` (another content at a position already staged, or several contents at a
    position first seen in this run); with `deliveries=false` (the ledger reads every raw row) it
    is not computed and is null. With `checked=false` raw_value is raw_text: the ledger, a view,
    shows only an excerpt, and without the check its SQL text stays within what an embedded Derby
    metastore stores for a view (32,700 characters) with every format enabled. -#}
{% macro raw_messages(format, deliveries=true, checked=true) -%}
  {{ return(adapter.dispatch('raw_messages', 'spark_cdc')(format, deliveries, checked)) }}
{%- endmacro %}

{% macro default__raw_messages(format, deliveries=true, checked=true) -%}
  {%- set cfg = spark_cdc.format_config(format) -%}
  {%- set position = spark_cdc._raw_position(format, cfg) -%}
  {%- set rechecks = [] -%}
  {%- for rel in spark_cdc.raw_relations(format) if is_incremental() and execute -%}
    {%- set bounds = spark_cdc._raw_redelivery_bounds(rel, position, format) -%}
    {%- if bounds is not none %}{% do rechecks.append((rel, bounds)) %}{% endif -%}
  {%- endfor -%}
  {%- set incoming -%}
  landed as (
    {%- for rel in spark_cdc.raw_relations(format) %}
    {{ spark_cdc._raw_landed_sql(rel, cfg, position, format, 'skip', checked) }}
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
  ),

  incoming as (
    select landed.*, cast(null as array<binary>) as prior_digests
    from landed
    {%- if is_incremental() %}
    left join (
      select raw_ref.relation as wm_relation, raw_ref.partition as wm_partition, max(raw_ref.order) as wm_order
      from {{ this }}
      group by raw_ref.relation, raw_ref.partition
    ) as wm
      on landed.raw_relation = wm.wm_relation and landed.raw_partition <=> wm.wm_partition
    where landed.raw_order is not null and (wm.wm_order is null or landed.raw_order > wm.wm_order)
    {#- A row without an order value cannot be watermarked: it is staged once and recognised on
        later runs by its content, so re-runs add nothing. #}
    union all
    select landed.*, cast(null as array<binary>) as prior_digests
    from landed
    left anti join (
      select distinct raw_ref.relation as seen_relation, raw_digest as seen_digest
      from {{ this }}
      where raw_ref.order is null
    ) as seen
      on seen.seen_relation = landed.raw_relation and seen.seen_digest = landed.raw_digest
    where landed.raw_order is null
    {%- endif %}
    {%- for rel, bounds in rechecks %}
    union all
    {{ spark_cdc._raw_recheck_sql(rel, cfg, position, format, bounds) }}
    {%- endfor %}
  )
  {%- endset -%}
  {#- Deliveries are told apart only when this run holds a position more than once (or rows
      without an order, or rows read again): a narrow query over the positions alone first, so a
      run without any does not sort every message by position. -#}
  {%- set repeats = deliveries -%}
  {%- if execute and deliveries and not rechecks -%}
    {%- set found = run_query('with ' ~ incoming ~ ' select count(*) from (select 1 from incoming'
          ~ ' group by raw_relation, raw_partition, raw_order having count(*) > 1 or raw_order is null) as r') -%}
    {%- set repeats = found[0][0] > 0 -%}
  {%- endif %}
  with {{ incoming }}

  select
    raw_value, raw_text, raw_key, raw_order, raw_partition, ingested_at, raw_relation, raw_digest,
    {%- if repeats %}
    case
      when prior_digests is not null and array_contains(prior_digests, raw_digest) then 'duplicate'
      when prior_digests is not null then 'position_reused'
      when raw_order is not null and size(collect_set(raw_digest) over (partition by raw_relation, raw_partition, raw_order)) > 1
        then 'position_reused'
      when row_number() over (
             partition by raw_relation, case when raw_order is null then raw_digest end, raw_partition, raw_order
             order by raw_digest) > 1
        then 'duplicate'
      else 'new'
    end as raw_delivery
    {%- else %}
    {{ "'new'" if deliveries else 'cast(null as string)' }} as raw_delivery
    {%- endif %}
  from incoming
{%- endmacro %}

{#- One raw relation's rows in raw_messages' columns (the relation's name as lineage, the content's
    digest), with `where`: 'skip' for an incremental run's skip filter, else a predicate or none;
    `checked`: raw_value is the checked value (else the value as landed). -#}
{% macro _raw_landed_sql(rel, cfg, position, format, where=none, checked=true) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {#- The raw relation's columns, looked up once (each lookup may be a DESCRIBE). -#}
  {%- set column_types = spark_cdc._raw_column_types(rel) if execute else {} -%}
  {%- set key_text = ("cast(r." ~ q(cfg['key_column']) ~ " as string)") if cfg.get('key_column') else 'cast(null as string)' -%}
  {%- set value_text = "cast(r." ~ q(cfg['value_column']) ~ " as string)" -%}
    select
      {{ spark_cdc._checked_raw_value(value_text) if checked else value_text }} as raw_value,
      {{ value_text }} as raw_text,
      {{ key_text }} as raw_key,
      {{ spark_cdc._raw_order_expr(rel, position['order'], format, column_types) }} as raw_order,
      {{ spark_cdc._raw_group_expr(position['group'], 'r') }} as raw_partition,
      {% if cfg.get('ingested_at_column') %}cast(r.{{ q(cfg['ingested_at_column']) }} as timestamp){% else %}cast(null as timestamp){% endif %} as ingested_at,
      {{ spark_cdc._sql_string(rel | string) }} as raw_relation,
      {{ spark_cdc._raw_digest(key_text, value_text) }} as raw_digest
    from {{ rel }} as r
    {%- set predicate = spark_cdc._raw_skip_filter(rel, position, 'r', column_types) if (where == 'skip' and is_incremental() and execute) else (where if where != 'skip' else none) %}
    {%- if predicate %}
    where {{ predicate }}
    {%- endif %}
{%- endmacro %}

{#- SQL: the identity of a record's content, 16 bytes of the SHA-256 of its key and value (lengths
    first, so no key and value pair can be spelled like another; null apart from empty). Message
    content can choose its text, but not a SHA-256 collision. -#}
{% macro _raw_digest(key_text, value_text) -%}
  unhex(substr(sha2(concat_ws(':', coalesce(length({{ key_text }}), -1), coalesce(length({{ value_text }}), -1), {{ key_text }}, {{ value_text }}), 256), 1, 32))
{%- endmacro %}

{#- Rows of `rel` at positions at or below their group's watermark that staging has not recorded,
    in raw_messages' columns plus prior_digests (the contents staged at that position). Reads only
    the orders `bounds` found (two numbers), and keeps a row when its position holds more rows of
    its content than staging has recorded there. -#}
{% macro _raw_recheck_sql(rel, cfg, position, format, bounds) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set order_col = 'r.' ~ q(position['order']) -%}
  {%- set relation_name = spark_cdc._sql_string(rel | string) %}
    select x.raw_value, x.raw_text, x.raw_key, x.raw_order, x.raw_partition, x.ingested_at, x.raw_relation, x.raw_digest,
           p.digests as prior_digests
    from (
      select c.*, row_number() over (partition by c.raw_partition, c.raw_order, c.raw_digest order by c.raw_digest) as nth
      from (
        {{ spark_cdc._raw_landed_sql(rel, cfg, position, format, spark_cdc._raw_order_between(rel, position, bounds)) }}
      ) as c
    ) as x
    left join (
      select raw_ref.partition as p, raw_ref.order as o, raw_digest as d, count(*) as n
      from {{ this }}
      where raw_ref.relation = {{ relation_name }} and raw_ref.order between {{ bounds[0] }} and {{ bounds[1] }}
      group by raw_ref.partition, raw_ref.order, raw_digest
    ) as s
      on s.p <=> x.raw_partition and s.o = x.raw_order and s.d = x.raw_digest
    left join (
      select raw_ref.partition as p, raw_ref.order as o, collect_set(raw_digest) as digests
      from {{ this }}
      where raw_ref.relation = {{ relation_name }} and raw_ref.order between {{ bounds[0] }} and {{ bounds[1] }}
      group by raw_ref.partition, raw_ref.order
    ) as p
      on p.p <=> x.raw_partition and p.o = x.raw_order
    where x.raw_order is not null
      and x.nth > coalesce(s.n, 0)
{%- endmacro %}

{#- SQL: the raw order column of `rel` between two orders (as raw_order spells them: timestamps as
    epoch microseconds), written so Spark can push it into the reader. -#}
{% macro _raw_order_between(rel, position, bounds) -%}
  {%- set column_types = spark_cdc._raw_column_types(rel) -%}
  {%- set col = 'r.' ~ spark_cdc.quote_identifier(position['order']) -%}
  {%- set t = column_types.get(position['order'] | lower, '') -%}
  {%- if t.startswith('timestamp') -%}
  {{ col }} between timestamp_micros({{ bounds[0] }}) and timestamp_micros({{ bounds[1] }})
  {%- elif t == 'date' -%}
  {{ col }} between date_from_unix_date({{ bounds[0] }}) and date_from_unix_date({{ bounds[1] }})
  {%- elif t in ('tinyint', 'smallint', 'int', 'integer', 'bigint', 'long') or t.startswith('decimal') -%}
  {{ col }} between {{ bounds[0] }} and {{ bounds[1] }}
  {%- else -%}
  try_cast({{ col }} as decimal(38,0)) between {{ bounds[0] }} and {{ bounds[1] }}
  {%- endif -%}
{%- endmacro %}

{#- The orders (lowest, highest) of the positions of `rel` at or below their group's watermark that
    hold more raw rows than staging has recorded there, or none when there are none: one query over
    the position columns alone (the raw relation's and the staged rows'). A group is compared over
    the orders its raw rows still span, so rows a retention policy removed from the raw relation
    are not missed rows; only a group holding more rows than staging recorded is compared position
    by position. Only the two orders come back, as digits. -#}
{% macro _raw_redelivery_bounds(rel, position, format) -%}
  {%- set column_types = spark_cdc._raw_column_types(rel) -%}
  {%- set relation_name = spark_cdc._sql_string(rel | string) -%}
  {%- set found -%}
with raw_pos as (
  select {{ spark_cdc._raw_group_expr(position['group'], 'r') }} as p,
         {{ spark_cdc._raw_order_expr(rel, position['order'], format, column_types) }} as o
  from {{ rel }} as r
),
staged_pos as (
  select raw_ref.partition as p, raw_ref.order as o
  from {{ this }}
  where raw_ref.relation = {{ relation_name }} and raw_ref.order is not null
),
watermarks as (
  select p, max(o) as wm from staged_pos group by p
),
raw_groups as (
  select r.p, count(*) as n, min(r.o) as lo, max(w.wm) as wm
  from raw_pos as r
  inner join watermarks as w on r.p <=> w.p
  where r.o <= w.wm
  group by r.p
),
suspect_groups as (
  select g.p, g.lo, g.wm
  from raw_groups as g
  left join (
    select s.p, count(*) as n
    from staged_pos as s
    inner join raw_groups as g on s.p <=> g.p
    where s.o between g.lo and g.wm
    group by s.p
  ) as s
    on s.p <=> g.p
  where g.n > coalesce(s.n, 0)
),
raw_counts as (
  select r.p, r.o, count(*) as n
  from raw_pos as r
  inner join suspect_groups as g on r.p <=> g.p
  where r.o between g.lo and g.wm
  group by r.p, r.o
),
staged_counts as (
  select s.p, s.o, count(*) as n
  from staged_pos as s
  inner join suspect_groups as g on s.p <=> g.p
  where s.o between g.lo and g.wm
  group by s.p, s.o
)
select cast(min(r.o) as string), cast(max(r.o) as string)
from raw_counts as r
left join staged_counts as s on s.p <=> r.p and s.o = r.o
where r.n > coalesce(s.n, 0)
  {%- endset -%}
  {%- set row = run_query(found)[0] -%}
  {%- if row[0] is none -%}{{ return(none) }}{%- endif -%}
  {{ return([row[0] | int, row[1] | int]) }}
{%- endmacro %}

{#- SQL: a record's group within its relation, as text (raw_ref.partition): null without group
    columns, the one column's text, or a JSON array of the columns' texts (["orders","0"]). -#}
{% macro _raw_group_expr(group_columns, alias) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- if not group_columns -%}
    cast(null as string)
  {%- elif group_columns | length == 1 -%}
    cast({{ alias }}.{{ q(group_columns[0]) }} as string)
  {%- else -%}
    to_json(array({% for c in group_columns %}cast({{ alias }}.{{ q(c) }} as string){{ ', ' if not loop.last }}{% endfor %}))
  {%- endif -%}
{%- endmacro %}

{#- A predicate on the raw columns, implied by the watermark join, that Spark can push into the
    parquet reader, so an incremental run skips the row groups of messages staged before instead of
    reading and checking every landed value: the order column at least the lowest watermark of the
    relation's groups and the lowest order of a group not staged yet, or null. Empty when it cannot
    be written that way (an order column that is not an integer or timestamp column, nothing staged
    from the relation yet, a group whose staged rows have no order value): the join alone then
    decides. Only numbers read back from tables reach the SQL text (as digits), never a group's
    values, which are data. Messages landing while the run runs are safe either way: a group new
    to the raw table after this query is still new on the next run, and the bound only ever admits
    more. -#}
{% macro _raw_skip_filter(relation, position, alias, column_types) -%}
  {%- set integer_types = ('tinyint', 'smallint', 'int', 'integer', 'bigint', 'long') -%}
  {%- set order_type = column_types.get(position['order'] | lower, '') -%}
  {%- set numeric = order_type in integer_types -%}
  {%- if not numeric and order_type != 'timestamp' -%}{{ return('') }}{%- endif -%}
  {%- set this_relation = spark_cdc._sql_string(relation | string) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set order_col = alias ~ '.' ~ q(position['order']) -%}
  {%- set order_value = order_col if numeric else 'unix_micros(' ~ order_col ~ ')' -%}
  {#- One query: the staged groups' watermarks (how many groups, how many with an order, the lowest)
      and the lowest order of a raw group not staged yet. -#}
  {%- set known = run_query(
        'select k.*, (select cast(min(' ~ order_value ~ ') as string) from ' ~ relation ~ ' as ' ~ alias
        ~ ' where ' ~ order_col ~ ' is not null and not exists (select 1 from ' ~ this ~ ' as s'
        ~ ' where s.raw_ref.relation = ' ~ this_relation
        ~ ' and s.raw_ref.partition <=> ' ~ spark_cdc._raw_group_expr(position['group'], alias) ~ ')) as fresh'
        ~ ' from (select count(*) as n, count(w.o) as ordered, cast(min(w.o) as string) as low'
        ~ ' from (select max(raw_ref.order) as o from ' ~ this ~ ' where raw_ref.relation = ' ~ this_relation
        ~ ' group by raw_ref.partition) as w) as k') -%}
  {%- if known[0][0] == 0 or known[0][1] < known[0][0] -%}{{ return('') }}{%- endif -%}
  {%- set bounds = [known[0][2] | int] -%}
  {%- if known[0][3] is not none -%}{%- do bounds.append(known[0][3] | int) -%}{%- endif -%}
  {%- set low = bounds | min -%}
  {{ return('(' ~ order_col ~ ' >= ' ~ (low if numeric else 'timestamp_micros(' ~ low ~ ')') ~ ' or ' ~ order_col ~ ' is null)') }}
{%- endmacro %}

{#- A raw relation's columns: lower-case name -> lower-case data type. Looked up once per relation
    and invocation (_invocation_memo): each lookup is a DESCRIBE of a relation dbt's cache does not
    hold. -#}
{% macro _raw_column_types(relation) -%}
  {%- set known = spark_cdc._invocation_memo().setdefault('raw_columns', {}) if execute else {} -%}
  {%- set key = relation | string -%}
  {%- if key not in known -%}
    {%- set types = {} -%}
    {%- for col in adapter.get_columns_in_relation(relation) -%}
      {%- do types.setdefault(col.name | lower, col.data_type | lower) -%}
    {%- endfor -%}
    {%- do known.update({key: types}) -%}
  {%- endif -%}
  {{ return(known[key]) }}
{%- endmacro %}

{#- The order column as decimal(38,0): timestamps as epoch microseconds, dates as epoch days,
    numbers (or numeric strings) as they are. -#}
{% macro _raw_order_expr(relation, column_name, format, column_types) -%}
  {%- set data_type = 'bigint' -%}
  {%- if execute -%}
    {%- set data_type = column_types.get(column_name | lower, '') -%}
    {%- if not data_type -%}
      {% set msg %}
spark_cdc: order column '{{ column_name }}' not found in raw relation {{ relation }} (format {{ format }}).
Fix: set var('spark_cdc').formats.{{ format }}.order_column to a column that orders the landed messages (for example a Kafka offset or an ingestion timestamp).
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
  {%- endif -%}
  {%- set col = 'r.' ~ spark_cdc.quote_identifier(column_name) -%}
  {%- if data_type.startswith('timestamp') -%}
    cast(unix_micros(cast({{ col }} as timestamp)) as decimal(38,0))
  {%- elif data_type == 'date' -%}
    cast(unix_date({{ col }}) as decimal(38,0))
  {%- else -%}
    try_cast({{ col }} as decimal(38,0))
  {%- endif -%}
{%- endmacro %}

{#- The landed value, unless it cannot be one JSON text (RFC 8259): invalid UTF-8, or text after
    the first JSON value (two messages in one value, a framing error). Spark's JSON functions accept
    both, silently reading the first value. (Invalid JSON is left as it is: every parser already
    quarantines it, and the quarantine keeps the original text.) Such a value is replaced by a
    marker (`#` never starts JSON) and its text (invalid bytes shown as U+FFFD), so every parser
    quarantines it as malformed_json, stage_changes names the cause from the marker, and a person
    reading the quarantine still sees the message. Empty values pass unchanged (tombstones).
    One JSON value: `[<value>]` is an array of exactly one element, and `{"y":1,"x":<value>}` an
    object whose y is 1. Spark's readers ignore whatever follows the first complete value, so either
    test alone can be fooled (`1,"z":2` passes the second; `1] [2` the first): the text that closes
    the array early breaks the object, and the text that adds object members breaks the array. A
    value failing them is marked only when it starts with a JSON value (else it is just invalid
    JSON). The one place that checks UTF-8 (_cdc_is_valid_utf8 / _cdc_make_valid_utf8). -#}
{% macro _raw_value_markers() -%}
  {{ return({
      'utf8': '#spark_cdc: not valid UTF-8 (bytes shown as U+FFFD): ',
      'one_value': '#spark_cdc: text after the first JSON value: ',
  }) }}
{%- endmacro %}

{#- See _raw_value_markers. -#}
{% macro _checked_raw_value(expr) -%}
  {%- set m = spark_cdc._raw_value_markers() -%}
  case
    when {{ expr }} is null or trim({{ expr }}) = '' then {{ expr }}
    {#- Over max_payload_bytes: quarantined unread (payload_too_large), so not read here either. #}
    when {{ spark_cdc._payload_too_large(expr) }} then {{ expr }}
    when not {{ spark_cdc._cdc_is_valid_utf8(expr) }} then concat({{ spark_cdc._sql_string(m['utf8']) }}, {{ spark_cdc._cdc_make_valid_utf8(expr) }})
    when coalesce(json_array_length(concat('[', {{ expr }}, ']')) = 1, false)
     and coalesce(from_json(concat('{"y":1,"x":', {{ expr }}, '}'), 'struct<y: int>').y = 1, false)
      then {{ expr }}
    when get_json_object({{ expr }}, '$') is not null
      then concat({{ spark_cdc._sql_string(m['one_value']) }}, {{ expr }})
    else {{ expr }}
  end
{%- endmacro %}

{#- SQL boolean: the string's bytes are valid UTF-8. Spark 3.5 has no is_valid_utf8: its UTF-8 decoder
    replaces what is invalid, so a valid string is one that survives decoding and encoding again. -#}
{% macro _cdc_is_valid_utf8(expr) -%}
  {%- if spark_cdc._spark3() -%}
  (encode(decode(cast({{ expr }} as binary), 'UTF-8'), 'UTF-8') = cast({{ expr }} as binary))
  {%- else -%}
  is_valid_utf8({{ expr }})
  {%- endif -%}
{%- endmacro %}

{#- SQL: the string with each invalid UTF-8 byte sequence replaced by U+FFFD. On Spark 3.5, Java's
    decoder does it, except that it replaces an encoded surrogate (ED A0..BF xx) once where Spark 4
    writes one U+FFFD per byte: such lead bytes are first made FF (invalid alone). -#}
{% macro _cdc_make_valid_utf8(expr) -%}
  {%- if spark_cdc._spark3() -%}
  {%- set bytes = "regexp_extract_all(hex(cast(" ~ expr ~ " as binary)), '[0-9A-F]{2}', 0)" -%}
  decode(unhex(array_join(transform({{ bytes }}, (_cdc_b, _cdc_i) ->
    case when _cdc_b = 'ED' and coalesce(substr(element_at({{ bytes }}, _cdc_i + 2), 1, 1) in ('A', 'B'), false)
         then 'FF' else _cdc_b end), '')), 'UTF-8')
  {%- else -%}
  make_valid_utf8({{ expr }})
  {%- endif -%}
{%- endmacro %}

{#- max_payload_bytes, the bound every parser puts on a landed value before parsing it, as SQL on
    `expr`: within the bound (parse it), over it (quarantine as payload_too_large), and that
    reason's detail. Bytes, as the setting's name says: octet_length is read from the string's
    header, where length() would walk every message's text. -#}
{% macro _payload_within_limit(expr) -%}
  octet_length({{ expr }}) <= {{ spark_cdc.get_config()['max_payload_bytes'] | int }}
{%- endmacro %}

{#- SQL boolean: the value `expr` is over max_payload_bytes (reason code payload_too_large). The bound
    is var spark_cdc max_payload_bytes, in bytes (octet_length, read from the string's header; length()
    would walk the text). -#}
{% macro _payload_too_large(expr) -%}
  octet_length({{ expr }}) > {{ spark_cdc.get_config()['max_payload_bytes'] | int }}
{%- endmacro %}

{#- SQL expression: the payload_too_large reason detail, `N bytes > max_payload_bytes M; ...`. The
    bound is var spark_cdc max_payload_bytes, in bytes (octet_length, read from the string's header;
    length() would walk the text). -#}
{% macro _payload_too_large_detail(expr) -%}
  concat(octet_length({{ expr }}), ' bytes > max_payload_bytes {{ spark_cdc.get_config()['max_payload_bytes'] | int }}; raw_value keeps its first {{ spark_cdc._oversized_head_chars() }} characters, the raw relation the whole value')
{%- endmacro %}

{#- How much of a value over max_payload_bytes its quarantine row keeps (characters): enough for a
    person to recognise the message, never the whole, which every later read would have to carry. -#}
{% macro _oversized_head_chars() -%}
  {{ return(65536) }}
{%- endmacro %}

{#- SQL: the first _oversized_head_chars() characters of `expr`. -#}
{% macro _oversized_value_head(expr) -%}
  substr({{ expr }}, 1, {{ spark_cdc._oversized_head_chars() }})
{%- endmacro %}
