{#- delta / iceberg / hudi: one persistent state table `<model>__cdc_state` (same columns as a
    parquet version table) updated by ONE MERGE INTO per run, generated from the same plan as the
    rewrite: scd2_state_sql recomputes the versions of only the keys the batch touches (its `old` is
    a view of those keys' versions, of every version when the batch carries a truncate), and the
    MERGE replaces all versions of those keys: versions no longer in the new set are deleted, the
    rest updated or inserted (merge key: key and valid-from order). Then the target view is swapped
    as in the rewrite.

    Crash safety: the MERGE commits atomically; the view swap that records consumed_through comes
    after it. A run killed between the two leaves the state advanced and the watermark behind, so
    the next run reads the same batch again and re-applies it. That is a no-op: a touched key's
    versions are recomputed from its stored changes plus the batch's, and scd2_state_sql counts an
    identical redelivery once (the same changes give the same versions); a truncate already applied
    is in the marker row, so it is not new and touches no key again.
    tests/integration/test_debezium_storage.py re-runs an applied batch this way. -#}
{% macro _cdc_scd2_merge(target_relation, state, cfg, batch_sql, consumed_through, stats) -%}
  {%- set state_relation = spark_cdc._cdc_state_relation(target_relation) -%}
  {%- set new_version = (state['version'] or 0) + 1 -%}
  {%- if state['version'] is none or cfg['full_refresh'] -%}
    {#- First build, full refresh, or an orphan of a first build killed before its view existed. -#}
    {% do spark_cdc._cdc_create_state_table(state_relation, cfg,
          spark_cdc.scd2_state_sql(batch_sql, none, cfg['columns'], cfg['key_columns'], cfg['cdc_format'], cfg['track_columns'])) %}
  {%- else -%}
    {% do spark_cdc._cdc_add_missing_columns(state_relation, cfg) %}
    {%- set touched = spark_cdc._cdc_touched_state_view(target_relation, state_relation, batch_sql) -%}
    {%- set source_sql = spark_cdc.scd2_merge_source_sql(batch_sql, touched, cfg['columns'], cfg['key_columns'], cfg['cdc_format'], cfg['track_columns']) -%}
    {%- call statement('main') -%}
      {{ spark_cdc.scd2_merge_sql(state_relation, source_sql, cfg['columns']) }}
    {%- endcall -%}
  {%- endif -%}

  {%- set new_relation = state_relation -%}
  {%- set marker = spark_cdc._sql_string(spark_cdc._truncate_marker_key()) -%}
  {%- set counts = run_query('select ' ~ spark_cdc._cdc_scd2_counts(cfg) | join(', ') ~ ' from ' ~ new_relation ~ ' where _cdc_key != ' ~ marker) -%}
  {%- call statement('cdc_swap') -%}
    {{ spark_cdc._cdc_scd2_view_sql(target_relation, new_relation, new_version, consumed_through, stats, counts, cfg) }}
  {%- endcall -%}
  {#- Version tables of a parquet/orc build this --full-refresh replaced. -#}
  {% do spark_cdc._cdc_drop_other_versions(target_relation, -1) %}
{%- endmacro %}
