{#- SELECT of the MERGE source of an SCD1 target: one row per state row the batch changes, with the
    state table's columns and `_cdc_merge_remove` (true: the row is deleted). `touched_relation`
    holds the state rows of the keys the batch touches (every row when it carries a truncate) and the
    truncate marker; scd1_state_sql computes their next state from it, so the source is exactly
    "the next state of the touched keys", already one row per key (scd1_state_sql folds each key's
    changes into one row). A touched key without a next row (a sequence-conflict rebuild that left
    nothing) is removed. Should a key ever appear twice, the query fails (raise_error) instead of
    letting MERGE pick one of them, or fail with a less clear message (dbt-databricks #902). -#}
{% macro scd1_merge_source_sql(batch_sql, touched_relation, columns, key_columns, cdc_format=none, simple_batch=false) -%}
  {{ return(adapter.dispatch('scd1_merge_source_sql', 'spark_cdc')(batch_sql, touched_relation, columns, key_columns, cdc_format, simple_batch)) }}
{%- endmacro %}

{% macro default__scd1_merge_source_sql(batch_sql, touched_relation, columns, key_columns, cdc_format=none, simple_batch=false) -%}
  {%- set q = spark_cdc.quote_identifier -%}
select
  coalesce(n._cdc_key, o._cdc_key) as _cdc_key,
  {%- for c in spark_cdc._cdc_scd1_state_columns(columns)[1:] %}
  n.{{ q(c) }},
  {%- endfor %}
  case
    when count(*) over (partition by coalesce(n._cdc_key, o._cdc_key)) > 1
      then raise_error({{ spark_cdc._sql_string("spark_cdc: the MERGE source of model '" ~ (model['name'] if model is mapping else '?') ~ "' has several rows for one key; nothing was written. This is a bug in spark_cdc: please report it with the batch.") }})
    else n._cdc_key is null
  end as _cdc_merge_remove
from (
  {{ spark_cdc.scd1_state_sql(batch_sql, touched_relation, columns, key_columns, cdc_format, simple_batch) }}
) as n
full outer join (select _cdc_key from {{ touched_relation }}) as o
  on n._cdc_key = o._cdc_key
{%- endmacro %}

{#- The physical columns of an SCD1 state (version or MERGE state) table, in order. -#}
{% macro _cdc_scd1_state_columns(columns) -%}
  {{ return(['_cdc_key'] + (columns | map(attribute='name') | list)
            + ['_cdc_op', '_cdc_seq', '_cdc_ord', '_cdc_commit_ts', '_cdc_applied_at', '_cdc_deleted', '_cdc_col_ords']) }}
{%- endmacro %}
