{#- Raw rows of a format not yet staged: the landing contract (value, optional key, order column,
    optional partition and ingestion-time columns) normalised to fixed names. raw_value is the value
    checked to be one JSON text (_checked_raw_value); raw_text is the value as landed, for cheap
    text tests that must not pay for that check (Spark prunes it where unused). The watermark is the
    highest order value already staged, per partition when a partition column is configured. -#}
{% macro raw_messages(format) -%}
  {{ return(adapter.dispatch('raw_messages', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__raw_messages(format) -%}
  {%- set cfg = spark_cdc.format_config(format) -%}
  {%- set rel = spark_cdc.raw_relation(format) -%}
  {%- set q = adapter.quote -%}
  {#- The raw relation's columns, looked up once (each lookup may be a DESCRIBE). -#}
  {%- set column_types = spark_cdc._raw_column_types(rel) if execute else {} -%}
  select
    raw_value, raw_text, raw_key, raw_order, raw_partition, ingested_at
  from (
    select
      {{ spark_cdc._checked_raw_value("cast(r." ~ q(cfg['value_column']) ~ " as string)") }} as raw_value,
      cast(r.{{ q(cfg['value_column']) }} as string) as raw_text,
      {% if cfg.get('key_column') %}cast(r.{{ q(cfg['key_column']) }} as string){% else %}cast(null as string){% endif %} as raw_key,
      {{ spark_cdc._raw_order_expr(rel, cfg['order_column'], format, column_types) }} as raw_order,
      {% if cfg.get('partition_column') %}cast(r.{{ q(cfg['partition_column']) }} as string){% else %}cast(null as string){% endif %} as raw_partition,
      {% if cfg.get('ingested_at_column') %}cast(r.{{ q(cfg['ingested_at_column']) }} as timestamp){% else %}cast(null as timestamp){% endif %} as ingested_at
    from {{ rel }} as r
    {%- if is_incremental() and execute %}
      {%- set skip = spark_cdc._raw_skip_filter(rel, cfg, 'r', column_types) %}
      {%- if skip %}
    where {{ skip }}
      {%- endif %}
    {%- endif %}
  ) as landed
  {%- if is_incremental() %}
  left join (
    select raw_ref.partition as wm_partition, max(raw_ref.order) as wm_order
    from {{ this }}
    group by raw_ref.partition
  ) as wm
    on landed.raw_partition <=> wm.wm_partition
  {#- A row without an order value cannot be watermarked: it is staged once and recognised on later
      runs by its content, so re-runs add nothing. #}
  where wm.wm_order is null
     or landed.raw_order > wm.wm_order
     or (landed.raw_order is null and not exists (
           select 1 from {{ this }} as seen
           where seen.raw_ref.order is null
             and seen.raw_value <=> landed.raw_value
             and seen.raw_key <=> landed.raw_key))
  {%- endif %}
{%- endmacro %}

{#- A predicate on the raw columns, implied by the watermark join below, that Spark can push into
    the parquet reader, so an incremental run skips the row groups of messages staged before
    (their order values are below every watermark) instead of reading and checking every landed
    value: the order column at least the lowest watermark of any partition, or null; or a partition
    without a watermark (null, or not staged yet). Empty when it cannot be written that way (an
    order column that is not an integer or timestamp column, a partition whose staged rows have no
    order value, a partition column that is not an integer or string column, more than 1,000
    partitions): the join alone then decides. Messages landing while
    the run runs are safe either way: a partition new to the raw table after this query is still
    new on the next run, and the order bound only ever admits more. -#}
{% macro _raw_skip_filter(relation, cfg, alias, column_types) -%}
  {%- set integer_types = ('tinyint', 'smallint', 'int', 'integer', 'bigint', 'long') -%}
  {%- set order_type = column_types.get(cfg['order_column'] | lower, '') -%}
  {%- set numeric = order_type in integer_types -%}
  {%- if not numeric and order_type != 'timestamp' -%}{{ return('') }}{%- endif -%}
  {#- Read as text (_cdc_parts_text_rows): run_query guesses types from text ('007' would come back
      as the number 7, and then name another partition). -#}
  {%- set wm = spark_cdc._cdc_parts_text_rows("concat('v', w.p), concat('v', cast(w.o as string))",
        '(select raw_ref.partition as p, max(raw_ref.order) as o from ' ~ this ~ ' group by raw_ref.partition) as w', 2) -%}
  {%- set bounds = [] -%}
  {%- set known = [] -%}
  {%- for row in wm -%}
    {%- if row[1] is none -%}{{ return('') }}{%- endif -%}
    {%- do bounds.append(row[1] | int) -%}
    {%- if row[0] is not none -%}{%- do known.append(row[0]) -%}{%- endif -%}
  {%- endfor -%}
  {%- if not bounds or known | length > 1000 -%}{{ return('') }}{%- endif -%}
  {%- set col = alias ~ '.' ~ adapter.quote(cfg['order_column']) -%}
  {%- set low = bounds | min -%}
  {%- set parts = [col ~ ' >= ' ~ (low if numeric else 'timestamp_micros(' ~ low ~ ')'), col ~ ' is null'] -%}
  {%- if cfg.get('partition_column') -%}
    {%- set pcol = alias ~ '.' ~ adapter.quote(cfg['partition_column']) -%}
    {%- set ptype = column_types.get(cfg['partition_column'] | lower, '') -%}
    {%- if ptype not in integer_types and ptype != 'string' -%}{{ return('') }}{%- endif -%}
    {%- do parts.append(pcol ~ ' is null') -%}
    {#- Partitions of the raw table not staged yet (a narrow scan of the partition column). -#}
    {%- set known_sql -%}
      {%- for k in known %}cast({{ spark_cdc._sql_string(k) }} as {{ ptype }}){{ ', ' if not loop.last }}{% endfor -%}
    {%- endset -%}
    {%- set fresh = spark_cdc._cdc_parts_text_rows("concat('v', cast(" ~ pcol ~ ' as string))',
          relation ~ ' as ' ~ alias ~ ' where ' ~ pcol ~ ' is not null'
          ~ ((' and ' ~ pcol ~ ' not in (' ~ known_sql ~ ')') if known else ''), 1) -%}
    {%- if fresh | length > 1000 -%}{{ return('') }}{%- endif -%}
    {%- if fresh | length > 0 -%}
      {%- set fresh_sql -%}
        {%- for row in fresh %}cast({{ spark_cdc._sql_string(row[0]) }} as {{ ptype }}){{ ', ' if not loop.last }}{% endfor -%}
      {%- endset -%}
      {%- do parts.append(pcol ~ ' in (' ~ fresh_sql ~ ')') -%}
    {%- endif -%}
  {%- endif -%}
  {{ return('(' ~ (parts | join(' or ')) ~ ')') }}
{%- endmacro %}

{#- A raw relation's columns: lower-case name -> lower-case data type. -#}
{% macro _raw_column_types(relation) -%}
  {%- set types = {} -%}
  {%- for col in adapter.get_columns_in_relation(relation) -%}
    {%- do types.setdefault(col.name | lower, col.data_type | lower) -%}
  {%- endfor -%}
  {{ return(types) }}
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
  {%- set col = 'r.' ~ adapter.quote(column_name) -%}
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
    quarantines it, and the quarantine keeps the original text.) Such a value is replaced by a marker (`#` never starts
    JSON) and its text (invalid bytes shown as U+FFFD), so every parser quarantines it as
    malformed_json, stage_changes names the cause from the marker, and a person reading the
    quarantine still sees the message. Empty values pass unchanged (tombstones). The second check
    parses `[<value>,"<end>"]` and asks for element 1, which only one whole JSON value lets through,
    and then checks that the value starts with a JSON value (else it is just invalid JSON).
    The one place that uses Spark 4's is_valid_utf8 / make_valid_utf8. -#}
{% macro _raw_value_markers() -%}
  {{ return({
      'utf8': '#spark_cdc: not valid UTF-8 (bytes shown as U+FFFD): ',
      'one_value': '#spark_cdc: text after the first JSON value: ',
  }) }}
{%- endmacro %}

{#- SQL expression: the landed value `expr`, or a marker and its text when it cannot be one JSON text
    (invalid UTF-8; text after the first JSON value, which Spark's JSON functions silently ignore), so
    every parser quarantines it as malformed_json and stage_changes names the cause. Empty values pass
    unchanged (tombstones). The one place that uses Spark 4's is_valid_utf8 / make_valid_utf8. -#}
{% macro _checked_raw_value(expr) -%}
  {%- set m = spark_cdc._raw_value_markers() -%}
  {%- set end = '#spark_cdc_end' -%}
  case
    when {{ expr }} is null or trim({{ expr }}) = '' then {{ expr }}
    when not is_valid_utf8({{ expr }}) then concat({{ spark_cdc._sql_string(m['utf8']) }}, make_valid_utf8({{ expr }}))
    when get_json_object(concat('[', {{ expr }}, ',"{{ end }}"]'), '$[1]') is distinct from '{{ end }}'
     and get_json_object({{ expr }}, '$') is not null
      then concat({{ spark_cdc._sql_string(m['one_value']) }}, {{ expr }})
    else {{ expr }}
  end
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

{#- SQL expression: the payload_too_large reason detail, `N bytes > max_payload_bytes M`. The bound is
    var spark_cdc max_payload_bytes, in bytes (octet_length, read from the string's header; length()
    would walk the text). -#}
{% macro _payload_too_large_detail(expr) -%}
  concat(octet_length({{ expr }}), ' bytes > max_payload_bytes {{ spark_cdc.get_config()['max_payload_bytes'] | int }}')
{%- endmacro %}
