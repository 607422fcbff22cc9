{#- SELECT producing the complete next state of an SCD1 target (every key, tombstones included)
    from its current state `old_relation` (none on first build / full refresh) and `batch_sql`
    (spark_cdc.cdc_batch_sql). Semantics:
    - per key, changes apply in `seq` order; a change not newer than the key's stored seq is stale
      and ignored, so a late, older message never overwrites newer state (and a redelivered one is
      a no-op);
    - identical redeliveries within the batch count once;
    - a delete leaves a tombstone row (_cdc_deleted) that keeps the delete's seq, so an older insert
      arriving later cannot resurrect the key;
    - a column absent from a partial image keeps its previous value; present and null becomes null;
    - a truncate deletes every key whose last change is older, and is remembered in a marker row
      so that older changes of keys not yet seen are refused too;
    - a key flagged `_rebuild` (a sequence conflict touched it after it was applied) forgets its
      stored row and is recomputed from the batch, which then carries its whole remaining history.
    `batch_sql` comes from spark_cdc.cdc_batch_sql(..., rebuild_keys=true). -#}
{% macro scd1_state_sql(batch_sql, old_relation, columns, key_columns, cdc_format=none) -%}
  {{ return(adapter.dispatch('scd1_state_sql', 'spark_cdc')(batch_sql, old_relation, columns, key_columns, cdc_format)) }}
{%- endmacro %}

{% macro default__scd1_state_sql(batch_sql, old_relation, columns, key_columns, cdc_format=none) -%}
  {%- set q = adapter.quote -%}
  {%- set marker = "'" ~ spark_cdc._truncate_marker_key() ~ "'" -%}
  {%- set old_columns = [] -%}
  {%- if old_relation is not none -%}
    {%- for col in adapter.get_columns_in_relation(old_relation) -%}{%- do old_columns.append(col.name | lower) -%}{%- endfor -%}
  {%- endif -%}
  {%- set order_type = 'struct<s1: decimal(38,0), s2: decimal(38,0), s3: decimal(38,0)>' %}
with batch as (
  {{ batch_sql }}
),

old as (
  {%- if old_relation is not none %}
  select
    _cdc_key,
    {%- for c in columns %}
    {% if c.name | lower in old_columns %}{{ q(c.name) }}{% else %}cast(null as {{ c.data_type }}) as {{ q(c.name) }}{% endif %},
    {%- endfor %}
    _cdc_op, _cdc_seq, _cdc_ord, _cdc_commit_ts, _cdc_applied_at, _cdc_deleted
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
    cast(null as boolean) as _cdc_deleted
  where false
  {%- endif %}
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

truncates as (
  select _seq, _ord, _commit_ts, _cdc_applied_at as _applied_at
  from (select _cdc_seq as _seq, _cdc_ord as _ord, _cdc_commit_ts as _commit_ts, _cdc_applied_at
        from old where _cdc_key = {{ marker }})
  union all
  select _seq, _ord, _commit_ts, current_timestamp() as _applied_at
  from batch where _op = 'truncate'
),

truncate_state as (
  select
    max_by(struct(_seq, _ord, _commit_ts, _applied_at), _ord) as latest,
    max(_ord) as through
  from truncates
),

new_truncate as (
  select max_by(struct(_seq, _ord, _commit_ts), _ord) as t from batch where _op = 'truncate'
),

deduped as (
  select * from (
    select b.*, row_number() over (partition by _k, _ord, _op, _after, _before order by _arrival) as _dup
    from batch as b
    where _op not in ('truncate', 'rebuild')
  ) where _dup = 1
),

fresh as (
  select c.*
  from deduped as c
  left join old_rows as o on c._k = o._cdc_key
  cross join truncate_state as ts
  where (o._cdc_key is null or c._ord > o._cdc_ord)
    and (ts.through is null or c._ord > ts.through)
),

bounded as (
  select
    f.*,
    max(case when _op = 'delete' then struct(_ord, _arrival) end) over (partition by _k) as _last_delete,
    max(struct(_ord, _arrival)) over (partition by _k) as _last_change
  from fresh as f
),

live as (
  select b.*, {{ spark_cdc.json_text_map("case when _op = 'delete' then _before else _after end") }} as _img
  from bounded as b
  where _last_delete is null or struct(_ord, _arrival) >= _last_delete
),

folded as (
  select
    _k,
    max_by(_op, struct(_ord, _arrival)) as _op,
    max_by(_seq, struct(_ord, _arrival)) as _seq,
    max_by(_hints, struct(_ord, _arrival)) as _key_hints,
    max(_ord) as _ord,
    max_by(_commit_ts, struct(_ord, _arrival)) as _commit_ts,
    max(_last_delete) is not null as _had_delete
    {%- for c in columns if c.name not in key_columns %},
    max_by(
      named_struct('v', try_element_at(_img, {{ spark_cdc._sql_string(c.name) }}),
                   'h', try_element_at(_hints, {{ spark_cdc._sql_string(c.name) }})),
      {#- A delete's before image describes the tombstone only: a later change of the key in this
          batch starts from nothing, never from the deleted row's values. #}
      case when (_op = 'delete' and struct(_ord, _arrival) = _last_change
                 and coalesce(map_contains_key(_img, {{ spark_cdc._sql_string(c.name) }}), false))
             or (_op != 'delete' and (_present is null or array_contains(_present, {{ spark_cdc._sql_string(c.name) }})))
           then struct(_ord, _arrival) end
    ) as {{ q(c.name ~ '__new') }}
    {%- endfor %}
  from live
  group by _k
),

merged as (
  select
    coalesce(f._k, o._cdc_key) as _cdc_key,
    {%- for c in columns %}
    {%- if c.name in key_columns %}
    {#- A key column is decoded from the canonical key when the key changes in this batch; otherwise
        the stored value stands (its type hint came with the change that wrote it). #}
    case
      when f._k is null then o.{{ q(c.name) }}
      else {{ spark_cdc.decode_value("try_element_at(" ~ spark_cdc.json_text_map('f._k') ~ ", " ~ spark_cdc._sql_string(c.name) ~ ")", c.data_type, 'try_element_at(f._key_hints, ' ~ spark_cdc._sql_string(c.name) ~ ')', cdc_format) }}
    end as {{ q(c.name) }},
    {%- else %}
    case
      when f._k is null then o.{{ q(c.name) }}
      when f.{{ q(c.name ~ '__new') }} is not null then {{ spark_cdc.decode_value('f.' ~ q(c.name ~ '__new') ~ '.v', c.data_type, 'f.' ~ q(c.name ~ '__new') ~ '.h', cdc_format) }}
      when f._had_delete or coalesce(o._cdc_deleted, false) then null
      else o.{{ q(c.name) }}
    end as {{ q(c.name) }},
    {%- endif %}
    {%- endfor %}
    case
      when f._k is not null then f._op
      when nt.t is not null and not o._cdc_deleted and o._cdc_ord < nt.t._ord then 'truncate'
      else o._cdc_op
    end as _cdc_op,
    case
      when f._k is not null then f._seq
      when nt.t is not null and not o._cdc_deleted and o._cdc_ord < nt.t._ord then nt.t._seq
      else o._cdc_seq
    end as _cdc_seq,
    case
      when f._k is not null then f._ord
      when nt.t is not null and not o._cdc_deleted and o._cdc_ord < nt.t._ord then nt.t._ord
      else o._cdc_ord
    end as _cdc_ord,
    case
      when f._k is not null then f._commit_ts
      when nt.t is not null and not o._cdc_deleted and o._cdc_ord < nt.t._ord then nt.t._commit_ts
      else o._cdc_commit_ts
    end as _cdc_commit_ts,
    case
      when f._k is not null then current_timestamp()
      when nt.t is not null and not o._cdc_deleted and o._cdc_ord < nt.t._ord then current_timestamp()
      else o._cdc_applied_at
    end as _cdc_applied_at,
    case
      when f._k is not null then f._op = 'delete'
      when nt.t is not null and not o._cdc_deleted and o._cdc_ord < nt.t._ord then true
      else o._cdc_deleted
    end as _cdc_deleted
  from old_rows as o
  full outer join folded as f on o._cdc_key = f._k
  cross join new_truncate as nt
)

select * from merged
union all
select
  {{ marker }} as _cdc_key,
  {%- for c in columns %}
  cast(null as {{ c.data_type }}) as {{ q(c.name) }},
  {%- endfor %}
  'truncate' as _cdc_op,
  latest._seq as _cdc_seq,
  latest._ord as _cdc_ord,
  latest._commit_ts as _cdc_commit_ts,
  latest._applied_at as _cdc_applied_at,
  true as _cdc_deleted
from truncate_state
where latest is not null
{%- endmacro %}

{#- Key of the row that remembers the latest applied truncate. Canonical keys are JSON objects
    (they start with '{'), so this can never collide with a real key. -#}
{% macro _truncate_marker_key() -%}#truncate{%- endmacro %}
