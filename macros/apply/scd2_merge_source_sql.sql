{#- SELECT of the MERGE source of an SCD2 target: one row per version row the batch changes, with
    the state table's columns and `_cdc_merge_remove`. A late change can split or reshape a key's
    versions, so every version of a touched key is replaced: scd2_state_sql recomputes the touched
    keys' versions from `touched_relation` (their stored rows, the truncate marker, and every row
    when the batch carries a truncate); a stored version whose (key, valid-from order) is not among
    the new ones is removed, the others are updated or inserted. The merge key is
    (_cdc_key, _cdc_valid_from_ord), compared null-safe (the truncate marker has no valid-from).
    Versions of one key open at distinct changes, so the source has one row per merge key; should it
    not, the query fails (raise_error) instead of letting MERGE pick a row. -#}
{% macro scd2_merge_source_sql(batch_sql, touched_relation, columns, key_columns, cdc_format=none, track_columns=none, whole_images=false) -%}
  {{ return(adapter.dispatch('scd2_merge_source_sql', 'spark_cdc')(batch_sql, touched_relation, columns, key_columns, cdc_format, track_columns, whole_images)) }}
{%- endmacro %}

{% macro default__scd2_merge_source_sql(batch_sql, touched_relation, columns, key_columns, cdc_format=none, track_columns=none, whole_images=false) -%}
  {%- set q = spark_cdc.quote_identifier -%}
select
  coalesce(n._cdc_key, o._cdc_key) as _cdc_key,
  {%- for c in spark_cdc._cdc_scd2_state_columns(columns)[1:] %}
  {%- if c == '_cdc_valid_from_ord' %}
  case when n._cdc_key is null then o._cdc_valid_from_ord else n._cdc_valid_from_ord end as _cdc_valid_from_ord,
  {%- else %}
  n.{{ q(c) }},
  {%- endif %}
  {%- endfor %}
  case
    when count(*) over (partition by coalesce(n._cdc_key, o._cdc_key), case when n._cdc_key is null then o._cdc_valid_from_ord else n._cdc_valid_from_ord end) > 1
      then raise_error({{ spark_cdc._sql_string("spark_cdc: the MERGE source of model '" ~ (model['name'] if model is mapping else '?') ~ "' has several versions of one key opening at the same change; nothing was written. This is a bug in spark_cdc: please report it with the batch.") }})
    else n._cdc_key is null
  end as _cdc_merge_remove
from (
  {{ spark_cdc.scd2_state_sql(batch_sql, touched_relation, columns, key_columns, cdc_format, track_columns, whole_images) }}
) as n
full outer join (select _cdc_key, _cdc_valid_from_ord from {{ touched_relation }}) as o
  on n._cdc_key = o._cdc_key and n._cdc_valid_from_ord <=> o._cdc_valid_from_ord
{%- endmacro %}

{#- The physical columns of an SCD2 state (version or MERGE state) table, in order. -#}
{% macro _cdc_scd2_state_columns(columns) -%}
  {{ return(['_cdc_key'] + (columns | map(attribute='name') | list)
            + ['_cdc_valid_from', '_cdc_valid_to', '_cdc_valid_from_seq', '_cdc_valid_to_seq', '_cdc_valid_from_ord',
               '_cdc_is_current', '_cdc_is_deleted', '_cdc_op', '_cdc_seq', '_cdc_commit_ts', '_cdc_changes']) }}
{%- endmacro %}
