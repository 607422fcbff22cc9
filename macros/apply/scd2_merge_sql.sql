{#- The MERGE INTO statement applying `source_sql` (scd2_merge_source_sql: one row per changed
    version row) to an SCD2 state table on delta / iceberg / hudi: versions flagged
    _cdc_merge_remove are deleted, other matched versions replaced, new versions inserted. Matched
    on (_cdc_key, _cdc_valid_from_ord), null-safe for the truncate marker row. -#}
{% macro scd2_merge_sql(state_relation, source_sql, columns) -%}
  {{ return(adapter.dispatch('scd2_merge_sql', 'spark_cdc')(state_relation, source_sql, columns)) }}
{%- endmacro %}

{% macro default__scd2_merge_sql(state_relation, source_sql, columns) -%}
  {{ spark_cdc._cdc_merge_statement(state_relation, source_sql, spark_cdc._cdc_scd2_state_columns(columns),
                                    't._cdc_key = s._cdc_key and t._cdc_valid_from_ord <=> s._cdc_valid_from_ord') }}
{%- endmacro %}
