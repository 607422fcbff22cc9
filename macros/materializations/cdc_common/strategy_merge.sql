{#- delta / iceberg / hudi: one persistent state table `<model>__cdc_state` (same columns as a
    parquet version table) updated by ONE MERGE INTO per run, generated from the same plan as the
    rewrite, then the target view is swapped as in the rewrite. The kind's state SQL (cdc_common/
    kind.sql) computes the next state of only the keys the batch touches:
    - cdc_scd1: scd1_state_sql computes the next state of those keys (its `old` is a view of their
      rows); merge key: the key.
    - cdc_scd2: scd2_state_sql recomputes the versions of those keys (its `old` is a view of those
      keys' versions, of every version when the batch carries a truncate), and the MERGE replaces all
      versions of those keys: versions no longer in the new set are deleted, the rest updated or
      inserted (merge key: key and valid-from order).

    Crash safety: the MERGE commits atomically; the view swap that records consumed_through comes
    after it. A run killed between the two leaves the state advanced and the watermark behind, so
    the next run reads the same batch again (plus anything newer) and re-applies it to a state that
    already holds it. That is a no-op:
    - cdc_scd1: each key's stored _cdc_ord is the newest change applied, and scd1_state_sql ignores
      every change not newer than it (the redelivery rule); a truncate already applied finds its
      keys deleted or newer and the marker already at its order. Rows are rewritten with the same
      values, with two exceptions in _cdc_applied_at only: rows a sequence-conflict rebuild
      recomputes get the re-run's time (as in a first run), and so may the hidden truncate marker
      when the re-applied batch carries its truncate (a tie of equal orders).
    - cdc_scd2: a touched key's versions are recomputed from its stored changes plus the batch's,
      and scd2_state_sql counts an identical redelivery once (the same changes give the same
      versions); a truncate already applied is in the marker row, so it is not new and touches no
      key again.
    tests/integration/test_debezium_storage.py re-runs an applied batch this way. A --full-refresh
    killed before its swap: persistent_state.sql (tests/integration/test_killed_full_refresh.py). -#}
{% macro _cdc_strategy_merge(target_relation, state, cfg, batch_sql, consumed_through, stats) -%}
  {%- set k = spark_cdc._cdc_kind(cfg['materialization']) -%}
  {%- set args = spark_cdc._cdc_apply_args(cfg) -%}
  {%- set state_relation = spark_cdc._cdc_state_relation(target_relation) -%}
  {%- set new_version = (state['version'] or 0) + 1 -%}
  {%- if state['version'] is none or cfg['full_refresh'] -%}
    {#- First build, full refresh, or an orphan of a first build killed before its view existed. -#}
    {% do spark_cdc._cdc_forget_state_facts(target_relation, state, cfg) %}
    {% do spark_cdc._cdc_create_state_table(state_relation, cfg, k['state_sql'](batch_sql, none, *args)) %}
  {%- else -%}
    {% do spark_cdc._cdc_add_missing_columns(state_relation, cfg) %}
    {% do spark_cdc._cdc_apply_tblproperties(state_relation, cfg) %}
    {%- set touched = spark_cdc._cdc_touched_state_view(target_relation, state_relation, batch_sql) -%}
    {%- set source_sql = k['merge_source_sql'](batch_sql, touched, *args) -%}
    {%- call statement('main') -%}
      {{ k['merge_sql'](state_relation, source_sql, cfg['columns']) }}
    {%- endcall -%}
  {%- endif -%}

  {%- set new_relation = state_relation -%}
  {%- set counts = spark_cdc._cdc_count_rows(new_relation, cfg) -%}
  {% do spark_cdc._cdc_before_view_swap(target_relation) %}
  {%- call statement('cdc_swap') -%}
    {{ k['view_sql'](target_relation, new_relation, new_version, consumed_through, stats, counts, cfg) }}
  {%- endcall -%}
  {#- Version tables of a parquet/orc build this --full-refresh replaced. -#}
  {% do spark_cdc._cdc_drop_other_versions(target_relation, -1) %}
{%- endmacro %}
