{#- delta / iceberg / hudi: one persistent state table `<model>__cdc_state` (same columns as a
    parquet version table) updated by ONE MERGE INTO per run, generated from the same plan as the
    rewrite: scd1_state_sql computes the next state, but only of the keys the batch touches
    (its `old` is a view of those rows), then the target view is swapped as in the rewrite.

    Crash safety: the MERGE commits atomically; the view swap that records consumed_through comes
    after it. A run killed between the two leaves the state advanced and the watermark behind, so
    the next run reads the same batch again (plus anything newer) and re-applies it to a state that
    already holds it. That is a no-op: each key's stored _cdc_ord is the newest change applied, and
    scd1_state_sql ignores every change not newer than it (the redelivery rule); a truncate already
    applied finds its keys deleted or newer and the marker already at its order. Rows are rewritten
    with the same values, with two exceptions in _cdc_applied_at only: rows a sequence-conflict
    rebuild recomputes get the re-run's time (as in a first run), and so may the hidden truncate
    marker when the re-applied batch carries its truncate (a tie of equal orders).
    tests/integration/test_debezium_storage.py re-runs an applied batch this way. -#}
{% macro _cdc_scd1_merge(target_relation, state, cfg, batch_sql, consumed_through, stats) -%}
  {%- set state_relation = spark_cdc._cdc_state_relation(target_relation) -%}
  {%- set new_version = (state['version'] or 0) + 1 -%}
  {%- if state['version'] is none or cfg['full_refresh'] -%}
    {#- First build, full refresh, or an orphan of a first build killed before its view existed. -#}
    {% do spark_cdc._cdc_create_state_table(state_relation, cfg,
          spark_cdc.scd1_state_sql(batch_sql, none, cfg['columns'], cfg['key_columns'], cfg['cdc_format'])) %}
  {%- else -%}
    {% do spark_cdc._cdc_add_missing_columns(state_relation, cfg) %}
    {%- set touched = spark_cdc._cdc_touched_state_view(target_relation, state_relation, batch_sql) -%}
    {%- set source_sql = spark_cdc.scd1_merge_source_sql(batch_sql, touched, cfg['columns'], cfg['key_columns'], cfg['cdc_format']) -%}
    {%- call statement('main') -%}
      {{ spark_cdc.scd1_merge_sql(state_relation, source_sql, cfg['columns']) }}
    {%- endcall -%}
  {%- endif -%}

  {%- set new_relation = state_relation -%}
  {%- set counts = run_query('select count_if(not _cdc_deleted), count_if(_cdc_deleted) from ' ~ new_relation ~ " where _cdc_key != '" ~ spark_cdc._truncate_marker_key() ~ "'") -%}
  {%- call statement('cdc_swap') -%}
    {{ spark_cdc._cdc_scd1_view_sql(target_relation, new_relation, new_version, consumed_through, stats, counts, cfg) }}
  {%- endcall -%}
  {#- Version tables of a parquet/orc build this --full-refresh replaced. -#}
  {% do spark_cdc._cdc_drop_other_versions(target_relation, -1) %}
{%- endmacro %}
