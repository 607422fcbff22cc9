{#- SELECT producing the complete next state of an SCD1 target (every key, tombstones included)
    from its current state `old_relation` (none on first build / full refresh) and `batch_sql`
    (spark_cdc.cdc_batch_sql). Semantics (docs/apply_semantics.md):
    - per key, changes apply in `seq` order, whatever their arrival order and batching. Each column
      is a last-writer-wins register: the hidden `_cdc_col_ords` remembers, for every column not
      written by the row's last change, the order of the change that wrote it (null: never
      written), so a late, older change still fills exactly the columns no newer change wrote (a
      full image arriving after a newer partial one), and a change not newer than any column is
      stale and ignored (a redelivery is a no-op);
    - a delete or truncate ends the key's life: every column older than it is reset to null. A
      deleted key keeps a tombstone row (_cdc_deleted) with the delete's seq and the values its
      before image carries (those describe the tombstone only), so an older change arriving later
      cannot resurrect it;
    - a truncate deletes every key whose last change is older (the tombstone carries the first
      truncate after that change, so the result does not depend on batching), and is remembered in
      a marker row so that older changes of keys not yet seen are refused;
    - a key flagged `_rebuild` (a sequence conflict touched it after it was applied) forgets its
      stored row and is recomputed from the batch, which then carries its whole remaining history.
    `batch_sql` comes from spark_cdc.cdc_batch_sql(..., rebuild_keys=true). With `simple_batch`
    (neither partial images nor truncates in the batch, no column older than its row's last change
    in the stored rows: _cdc_batch_facts) the same rows come from a shorter statement,
    _scd1_simple_state_sql. -#}
{% macro scd1_state_sql(batch_sql, old_relation, columns, key_columns, cdc_format=none, simple_batch=false) -%}
  {{ return(adapter.dispatch('scd1_state_sql', 'spark_cdc')(batch_sql, old_relation, columns, key_columns, cdc_format, simple_batch)) }}
{%- endmacro %}

{% macro default__scd1_state_sql(batch_sql, old_relation, columns, key_columns, cdc_format=none, simple_batch=false) -%}
  {%- if simple_batch -%}
    {{ return(spark_cdc._scd1_simple_state_sql(batch_sql, old_relation, columns, key_columns, cdc_format)) }}
  {%- endif -%}
  {%- set marker = spark_cdc._sql_string(spark_cdc._truncate_marker_key()) -%}
  {%- set value_columns = columns | rejectattr('name', 'in', key_columns) | list %}
with batch as (
  {{ batch_sql }}
),

old as (
  {{ spark_cdc._scd1_old_sql(old_relation, columns) }}
),

rebuilt as (
  select distinct _k from batch where _rebuild
),

old_rows as (
  select o.*
  from old as o
  left anti join rebuilt as r on o._cdc_key = r._k
  where o._cdc_key != {{ marker }}
),

{{ spark_cdc._scd1_truncates_sql(marker) }},

{#- The batch is distributed by key once, here: every later window, the fold and the join with the
    stored rows are per key, so Spark reuses this partitioning instead of shuffling the wide change
    rows (images, type hints) again for each (measured: one shuffle fewer, about a fifth of the
    statement on 400,000 changes over 200,000 keys). #}
deduped as (
  select * from (
    select b.*, row_number() over (partition by _k, _ord, {{ spark_cdc._change_effect('_op') }}, _after order by _arrival) as _dup
    from (
      select * from batch
      where _op not in ('truncate', 'rebuild')
      distribute by _k
    ) as b
  ) where _dup = 1
),

{#- A change can still decide something only when it is newer than the latest truncate applied
    before this batch and newer than the oldest column of the key's stored row. #}
fresh as (
  select c.*
  from deduped as c
  left join old_rows as o on c._k = o._cdc_key
  cross join old_truncate as ot
  where (ot.through is null or c._ord > ot.through)
    and (o._cdc_key is null or coalesce(c._ord > {{ spark_cdc._scd1_floor('o') }}, true))
),

{{ spark_cdc._scd1_fold_sql(value_columns) }},

{{ spark_cdc._scd1_decide_sql(value_columns) }},

{{ spark_cdc._scd1_resolve_sql(value_columns, cdc_format) }}

select
  {{ spark_cdc._scd1_state_columns_sql(columns, key_columns, cdc_format) }}
from resolved as d
union all
select
  {{ marker }} as _cdc_key,
  {%- for c in columns %}
  cast(null as {{ c.data_type }}) as {{ spark_cdc.quote_identifier(c.name) }},
  {%- endfor %}
  'truncate' as _cdc_op,
  latest._seq as _cdc_seq,
  latest._ord as _cdc_ord,
  latest._commit_ts as _cdc_commit_ts,
  latest._applied_at as _cdc_applied_at,
  true as _cdc_deleted,
  {{ spark_cdc._scd1_empty_col_ords() }} as _cdc_col_ords
from truncate_state
where latest is not null
{%- endmacro %}

{#- Key of the row that remembers the latest applied truncate. Canonical keys are JSON objects
    (they start with '{'), so this can never collide with a real key. -#}
{% macro _truncate_marker_key() -%}#truncate{%- endmacro %}

{#- The type of a change's null-free order (spark_cdc.change_order_key). -#}
{% macro _cdc_order_type() -%}struct<s1: decimal(38,0), s2: decimal(38,0), s3: decimal(38,0)>{%- endmacro %}

{#- An SCD1 row's per-column orders when every column was written by its last change. -#}
{% macro _scd1_empty_col_ords() -%}
  cast(map() as map<string, {{ spark_cdc._cdc_order_type() }}>)
{%- endmacro %}

{#- The stored state with the current columns: a column declared after the table was written reads
    as null, and a table written before per-column orders existed has none (every column then
    counts as written by the row's last change). -#}
{% macro _scd1_old_sql(old_relation, columns) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set order_type = spark_cdc._cdc_order_type() -%}
  {%- if old_relation is not none -%}
    {%- set stored = [] -%}
    {%- for col in adapter.get_columns_in_relation(old_relation) -%}{%- do stored.append(col.name | lower) -%}{%- endfor %}
  select
    _cdc_key,
    {%- for c in columns %}
    {% if c.name | lower in stored %}{{ q(c.name) }}{% else %}cast(null as {{ c.data_type }}) as {{ q(c.name) }}{% endif %},
    {%- endfor %}
    _cdc_op, _cdc_seq, _cdc_ord, _cdc_commit_ts, _cdc_applied_at, _cdc_deleted,
    {% if '_cdc_col_ords' in stored %}_cdc_col_ords{% else %}{{ spark_cdc._scd1_empty_col_ords() }} as _cdc_col_ords{% endif %}
  from {{ old_relation }}
  {%- else %}
  select
    cast(null as string) as _cdc_key,
    {%- for c in columns %}
    cast(null as {{ c.data_type }}) as {{ q(c.name) }},
    {%- endfor %}
    cast(null as string) as _cdc_op,
    cast(null as {{ order_type }}) as _cdc_seq,
    cast(null as {{ order_type }}) as _cdc_ord,
    cast(null as timestamp) as _cdc_commit_ts,
    cast(null as timestamp) as _cdc_applied_at,
    cast(null as boolean) as _cdc_deleted,
    {{ spark_cdc._scd1_empty_col_ords() }} as _cdc_col_ords
  where false
  {%- endif %}
{%- endmacro %}

{#- SQL: the order of the oldest column of stored row `alias` (null when a column was never
    written): a change not newer than it cannot decide any column. -#}
{% macro _scd1_floor(alias) -%}
  case when exists(map_values({{ alias }}._cdc_col_ords), v -> v is null) then null
       else array_min(concat(array({{ alias }}._cdc_ord), map_values({{ alias }}._cdc_col_ords))) end
{%- endmacro %}

{#- CTEs old_truncate, truncates, truncate_state and batch_truncates: the latest truncate applied
    by earlier runs (a change older than it is refused), the marker row's next content, and this
    batch's truncates newer than the marker, in sequence order. -#}
{% macro _scd1_truncates_sql(marker) -%}
old_truncate as (
  select max(_cdc_ord) as through from old where _cdc_key = {{ marker }}
),

truncates as (
  select _seq, _ord, _commit_ts, _cdc_applied_at as _applied_at
  from (select _cdc_seq as _seq, _cdc_ord as _ord, _cdc_commit_ts as _commit_ts, _cdc_applied_at
        from old where _cdc_key = {{ marker }})
  union all
  select _seq, _ord, _commit_ts, current_timestamp() as _applied_at
  from batch where _op = 'truncate'
),

truncate_state as (
  select max_by(struct(_seq, _ord, _commit_ts, _applied_at), _ord) as latest
  from truncates
),

batch_truncates as (
  select coalesce(sort_array(collect_list(struct(t._ord, t._seq, t._commit_ts))), array()) as ts
  from (select distinct _ord, _seq, _commit_ts from batch where _op = 'truncate') as t
  cross join old_truncate as ot
  where ot.through is null or t._ord > ot.through
)
{%- endmacro %}

{#- CTEs bounded, live and folded: each key's fresh changes folded into one row. Only the changes at
    or after the key's last delete and its last full image (not a delete, no present_columns) can
    decide a column: an earlier one loses every column to them. Per column, the newest change that
    carries it (`<col>__new`: value, type hint, order); a delete carries its before image's columns
    only when it is the key's last change (they describe the tombstone). `_reset`: the last delete's
    order, below which every column is null. -#}
{% macro _scd1_fold_sql(value_columns) -%}
  {%- set s = spark_cdc._sql_string -%}
  {%- set pos = 'struct(_ord, _arrival)' -%}
bounded as (
  select
    f.*,
    max(case when _op = 'delete' then {{ pos }} end) over (partition by _k) as _last_delete,
    max({{ pos }}) over (partition by _k) as _last_change,
    max(case when _op != 'delete' and _present is null then {{ pos }} end) over (partition by _k) as _last_full
  from fresh as f
),

live as (
  select b.*, {{ spark_cdc._cdc_image_members("case when _op = 'delete' then _before else _after end") }} as _img
  from bounded as b
  where (_last_delete is null or {{ pos }} >= _last_delete)
    and (_last_full is null or {{ pos }} >= _last_full)
),

folded as (
  select
    _k,
    max_by(_op, {{ pos }}) as _op,
    max_by(_seq, {{ pos }}) as _seq,
    max_by(_hints, {{ pos }}) as _key_hints,
    max(_ord) as _ord,
    max_by(_commit_ts, {{ pos }}) as _commit_ts,
    max(case when _op = 'delete' then _ord end) as _reset
    {%- for c in value_columns %},
    max_by(
      named_struct('v', try_element_at(_img, {{ s(c.name) }}), 'h', try_element_at(_hints, {{ s(c.name) }}), 'o', _ord),
      case when (_op = 'delete' and {{ pos }} = _last_change and coalesce(map_contains_key(_img, {{ s(c.name) }}), false))
             or (_op != 'delete' and (_present is null or array_contains(_present, {{ s(c.name) }})))
           then {{ pos }} end
    ) as {{ spark_cdc.quote_identifier(c.name ~ '__new') }}
    {%- endfor %}
  from live
  group by _k
)
{%- endmacro %}

{#- CTE decided: every stored row and every folded key, side by side (`o`, `f`), with what decides
    the row: `_latest` (order of its newest change), `_from_batch` (that change is in the batch),
    `_trunc` (the first truncate of the batch at or after it, unless it is a delete: the key ends
    there), `_reset` (the newest delete or truncate before it: older columns are null), and per
    column `<col>__ords` (the order of the stored value, `s`, and of the batch's, `b`), from which
    _scd1_resolve_sql decides which value wins. -#}
{% macro _scd1_decide_sql(value_columns) -%}
  {%- set q = spark_cdc.quote_identifier -%}
joined as (
  select
    struct(o.*) as o,
    struct(f.*) as f,
    greatest(o._cdc_ord, f._ord) as _latest,
    f._ord is not null and (o._cdc_ord is null or f._ord > o._cdc_ord) as _from_batch,
    bt.ts as _ts,
    case when o._cdc_key is not null then {{ spark_cdc._scd1_floor('o') }} end as _floor
  from old_rows as o
  full outer join folded as f on o._cdc_key = f._k
  cross join batch_truncates as bt
),

ended as (
  select
    j.*,
    case when not (case when j._from_batch then j.f._op = 'delete' else coalesce(j.o._cdc_deleted, false) end)
         then try_element_at(filter(j._ts, t -> t._ord >= j._latest), 1) end as _trunc,
    greatest(j.f._reset, try_element_at(filter(j._ts, t -> t._ord < j._latest), -1)._ord) as _reset
  from joined as j
),

decided as (
  select
    e.*
    {%- for c in value_columns %}
    {%- set stored_ord = "case when e.o._cdc_key is null then null when map_contains_key(e.o._cdc_col_ords, " ~ spark_cdc._sql_string(c.name) ~ ") then e.o._cdc_col_ords[" ~ spark_cdc._sql_string(c.name) ~ "] else e.o._cdc_ord end" %}
    {%- set new = 'e.f.' ~ q(c.name ~ '__new') %},
    named_struct('s', {{ stored_ord }}, 'b', {{ new }}.o) as {{ q(c.name ~ '__ords') }}
    {%- endfor %}
  from ended as e
)
{%- endmacro %}

{#- CTE resolved: per value column, which value wins (`<col>__src`, _scd1_column_source) and the
    batch's value decoded to the column's type (`<col>__dec`, null when no change of the batch
    touches the key), each written once: the select list reads them several times, and writing the
    decoder there twice per column doubled the statement Spark analyses (half of it, 48 KB of 61 KB,
    was the select list for ten Debezium columns). -#}
{% macro _scd1_resolve_sql(value_columns, cdc_format) -%}
  {%- set q = spark_cdc.quote_identifier -%}
resolved as (
  select
    d.*
    {%- for c in value_columns %}
    {%- set new = 'd.f.' ~ q(c.name ~ '__new') %},
    {{ spark_cdc._scd1_column_source(q(c.name ~ '__ords')) }} as {{ q(c.name ~ '__src') }},
    case when d.f._k is not null then
      {{ spark_cdc.decode_value(spark_cdc._cdc_member_text(new ~ '.v', new ~ '.h', cdc_format, c.data_type), c.data_type, new ~ '.h', cdc_format) }}
    end as {{ q(c.name ~ '__dec') }}
    {%- endfor %}
  from decided as d
)
{%- endmacro %}

{#- The select list of the next state from `resolved as d` (see _scd1_decide_sql, _scd1_resolve_sql). -#}
{% macro _scd1_state_columns_sql(columns, key_columns, cdc_format) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set s = spark_cdc._sql_string -%}
  {%- set value_columns = columns | rejectattr('name', 'in', key_columns) | list -%}
  {%- set untouched = "(d.f._k is null and d._trunc is null and not coalesce(d._reset > d._floor and not d.o._cdc_deleted, false))" -%}
  {%- set batch_delete = "(d._from_batch and d.f._op = 'delete')" -%}
  coalesce(d.f._k, d.o._cdc_key) as _cdc_key,
  {%- for c in columns %}
  {%- if c.name in key_columns %}
  {#- A key column is decoded from the canonical key when the batch changes the key; otherwise the
      stored value stands (its type hint came with the change that wrote it). #}
  case
    when d.f._k is null then d.o.{{ q(c.name) }}
    else {{ spark_cdc.decode_value("try_element_at(" ~ spark_cdc.json_text_map('d.f._k') ~ ", " ~ s(c.name) ~ ")", c.data_type, 'try_element_at(d.f._key_hints, ' ~ s(c.name) ~ ')', cdc_format) }}
  end as {{ q(c.name) }},
  {%- else %}
  {%- set new = 'd.f.' ~ q(c.name ~ '__new') %}
  {%- set src = 'd.' ~ q(c.name ~ '__src') %}
  {%- set decoded = 'd.' ~ q(c.name ~ '__dec') %}
  case
    when {{ untouched }} then d.o.{{ q(c.name) }}
    when {{ batch_delete }} then case when {{ new }}.o = d.f._ord then {{ decoded }} end
    when {{ src }} = 1 then {{ decoded }}
    when {{ src }} = 2 or d.o._cdc_deleted then null
    else d.o.{{ q(c.name) }}
  end as {{ q(c.name) }},
  {%- endif %}
  {%- endfor %}
  {%- set deleted = "(d._trunc is not null or case when d._from_batch then d.f._op = 'delete' else d.o._cdc_deleted end)" %}
  case when d._trunc is not null then 'truncate' when d._from_batch then d.f._op else d.o._cdc_op end as _cdc_op,
  case when d._trunc is not null then d._trunc._seq when d._from_batch then d.f._seq else d.o._cdc_seq end as _cdc_seq,
  case when d._trunc is not null then d._trunc._ord when d._from_batch then d.f._ord else d.o._cdc_ord end as _cdc_ord,
  case when d._trunc is not null then d._trunc._commit_ts when d._from_batch then d.f._commit_ts else d.o._cdc_commit_ts end as _cdc_commit_ts,
  case
    when {{ untouched }} then d.o._cdc_applied_at
    when d._trunc is not null or d._from_batch or d.o._cdc_key is null
      {%- for c in value_columns %} or d.{{ q(c.name ~ '__src') }} != 0{% endfor %}
      then current_timestamp()
    else d.o._cdc_applied_at
  end as _cdc_applied_at,
  {{ deleted }} as _cdc_deleted,
  case
    when {{ untouched }} then d.o._cdc_col_ords
    when {{ deleted }} then {{ spark_cdc._scd1_empty_col_ords() }}
    {%- if value_columns %}
    else map_filter(
      map({% for c in value_columns %}{{ s(c.name) }}, {{ spark_cdc._scd1_column_order(c.name) }}{{ ', ' if not loop.last }}{% endfor %}),
      (col, ord) -> ord is null or ord < greatest(d.o._cdc_ord, d.f._ord))
    {%- else %}
    else {{ spark_cdc._scd1_empty_col_ords() }}
    {%- endif %}
  end as _cdc_col_ords
{%- endmacro %}

{#- SQL over `decided as d`: which value of a column wins (its `<col>__ords` struct: the stored
    column's order `s` and the batch's `b`): 1 the batch's (newer than the stored one and than the
    last reset), 2 null (a reset newer than the stored one), 0 the stored value. A missing order
    (null) is older than every change. -#}
{% macro _scd1_column_source(ords) -%}
  (case
     when d.{{ ords }}.b is not null and coalesce(d.{{ ords }}.b > d.{{ ords }}.s, true) and coalesce(d.{{ ords }}.b > d._reset, true) then 1
     when d._reset is not null and coalesce(d._reset > d.{{ ords }}.s, true) then 2
     else 0
   end)
{%- endmacro %}

{#- SQL over `resolved as d`: the order of the change that wrote the winning value of column `name`. -#}
{% macro _scd1_column_order(name) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set ords = q(name ~ '__ords') -%}
  case d.{{ q(name ~ '__src') }} when 1 then d.{{ ords }}.b when 2 then d._reset else d.{{ ords }}.s end
{%- endmacro %}
