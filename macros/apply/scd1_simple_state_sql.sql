{#- The next SCD1 state when the batch is simple: no truncate and no change that leaves out one of
    the target's columns (a partial image) in the batch, and no stored row with a column older than
    its last change (the target's `spark_cdc.partial_rows` is 0). Chosen once per run by the
    materialization (_cdc_batch_facts), never per row. Then every change writes every column, so a
    key's next row is its newest fresh change or its stored row, whichever is newer: one window per
    key picks that change (the first delivered of its seq: a redelivery counts once, as in
    scd1_state_sql), one full outer join with the stored rows decides, and only the winning
    change's image is parsed and decoded. A key a sequence conflict flagged `_rebuild` forgets its
    stored row, as in scd1_state_sql: the batch carries its whole remaining history.
    scd1_state_sql folds every change of a key column by column, for the batches this cannot take;
    both give the same rows (the randomized suite checks both against its reference). The truncate
    marker, if any, passes through unchanged and still refuses older changes. -#}
{% macro _scd1_simple_state_sql(batch_sql, old_relation, columns, key_columns, cdc_format) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set s = spark_cdc._sql_string -%}
with batch as (
  {{ batch_sql }}
),

old as (
  {{ spark_cdc._scd1_old_sql(old_relation, columns) }}
),

old_truncate as (
  select max(_cdc_ord) as through from old where _cdc_key = {{ s(spark_cdc._truncate_marker_key()) }}
),

old_rows as (
  select o.*
  from old as o
  left anti join (select distinct _k from batch where _rebuild) as r on o._cdc_key = r._k
),

newest as (
  select * from (
    select b.*, row_number() over (partition by _k order by _ord desc, _arrival) as _rn
    from batch as b
    where _op != 'rebuild'
  ) where _rn = 1
),

fresh as (
  select n.*, {{ spark_cdc._cdc_image_members("case when _op = 'delete' then _before else _after end") }} as _img
  from newest as n
  cross join old_truncate as ot
  where ot.through is null or n._ord > ot.through
),

joined as (
  select
    struct(o.*) as o,
    struct(f.*) as f,
    f._k is not null and (o._cdc_key is null or f._ord > o._cdc_ord) as _take
  from old_rows as o
  full outer join fresh as f on o._cdc_key = f._k
)

select
  case when j._take then j.f._k else j.o._cdc_key end as _cdc_key,
  {%- for c in columns %}
  {%- if c.name in key_columns %}
  {%- set text = "try_element_at(" ~ spark_cdc.json_text_map('j.f._k') ~ ", " ~ s(c.name) ~ ")" %}
  {%- else %}
  {%- set text = spark_cdc._cdc_member_text('try_element_at(j.f._img, ' ~ s(c.name) ~ ')', 'try_element_at(j.f._hints, ' ~ s(c.name) ~ ')', cdc_format, c.data_type) %}
  {%- endif %}
  case when j._take then {{ spark_cdc.decode_value(text, c.data_type, 'try_element_at(j.f._hints, ' ~ s(c.name) ~ ')', cdc_format) }}
       else j.o.{{ q(c.name) }} end as {{ q(c.name) }},
  {%- endfor %}
  {%- for name in ['op', 'seq', 'ord', 'commit_ts'] %}
  case when j._take then j.f._{{ name }} else j.o._cdc_{{ name }} end as _cdc_{{ name }},
  {%- endfor %}
  case when j._take then current_timestamp() else j.o._cdc_applied_at end as _cdc_applied_at,
  case when j._take then j.f._op = 'delete' else j.o._cdc_deleted end as _cdc_deleted,
  case when j._take then {{ spark_cdc._scd1_empty_col_ords() }} else j.o._cdc_col_ords end as _cdc_col_ords
from joined as j
{%- endmacro %}
