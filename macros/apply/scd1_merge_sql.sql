{#- The MERGE INTO statement applying `source_sql` (scd1_merge_source_sql: one row per changed
    state row) to an SCD1 state table on delta / iceberg / hudi: rows flagged _cdc_merge_remove are
    deleted, other matched rows replaced, new keys inserted. Matched on _cdc_key. -#}
{% macro scd1_merge_sql(state_relation, source_sql, columns) -%}
  {{ return(adapter.dispatch('scd1_merge_sql', 'spark_cdc')(state_relation, source_sql, columns)) }}
{%- endmacro %}

{% macro default__scd1_merge_sql(state_relation, source_sql, columns) -%}
  {{ spark_cdc._cdc_merge_statement(state_relation, source_sql, spark_cdc._cdc_scd1_state_columns(columns), 't._cdc_key = s._cdc_key') }}
{%- endmacro %}

{#- MERGE of a source that holds one row per target row, flagged _cdc_merge_remove. Target columns
    in assignments are unqualified (accepted by Delta, Iceberg and Hudi alike). -#}
{% macro _cdc_merge_statement(state_relation, source_sql, state_columns, on_sql) -%}
  {%- set q = spark_cdc.quote_identifier -%}
merge into {{ state_relation }} as t
using (
  {{ source_sql }}
) as s
on {{ on_sql }}
when matched and s._cdc_merge_remove then delete
when matched then update set
  {%- for c in state_columns %}
  {{ q(c) }} = s.{{ q(c) }}{{ ',' if not loop.last }}
  {%- endfor %}
when not matched and not s._cdc_merge_remove then insert (
  {%- for c in state_columns %}{{ q(c) }}{{ ', ' if not loop.last }}{% endfor -%}
) values (
  {%- for c in state_columns %}s.{{ q(c) }}{{ ', ' if not loop.last }}{% endfor -%}
)
{%- endmacro %}
