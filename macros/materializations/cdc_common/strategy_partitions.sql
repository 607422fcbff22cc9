{#- Partitioned parquet/orc: one persistent partitioned table `<model>__cdc_parts` of which a run
    rewrites only the partitions its batch touches, then swaps the target view (watermark) as the
    versioned rewrite does. Plan, crash safety and garbage collection: cdc_common/partition_storage.sql.
    Unpartitioned parquet/orc targets stay on strategy_rewrite.sql (a partition is the unit a
    metastore can switch atomically; without partitions the unit is the table, i.e. a new version).
    The counts the view records (the kind's count_properties, cdc_common/kind.sql) are carried
    forward by the rewritten partitions' deltas from the values the view held when the run began
    (state['properties']), recounted over the whole table after a recovery or when the view lacks
    them. -#}
{% macro _cdc_strategy_partitions(target_relation, state, cfg, batch_sql, consumed_through, stats) -%}
  {%- set k = spark_cdc._cdc_kind(cfg['materialization']) -%}
  {%- set args = spark_cdc._cdc_apply_args(cfg) -%}
  {%- set parts = spark_cdc._cdc_parts_relation(target_relation) -%}
  {%- set new_version = (state['version'] or 0) + 1 -%}
  {%- set plan = none -%}
  {%- if state['version'] is none or cfg['full_refresh'] -%}
    {% do spark_cdc._cdc_forget_state_facts(target_relation, state, cfg) %}
    {%- set rewritten = spark_cdc._cdc_parts_create(target_relation, cfg, k['state_sql'](batch_sql, none, *args)) -%}
    {%- set counts = spark_cdc._cdc_count_rows(parts, cfg) -%}
  {%- else -%}
    {%- set recovered = spark_cdc._cdc_parts_recover(target_relation) -%}
    {%- set touched = spark_cdc._cdc_parts_touched(target_relation, batch_sql, cfg) -%}
    {%- set result = spark_cdc._cdc_parts_rewrite(target_relation, cfg, touched, k['state_sql'](batch_sql, touched, *args),
                                                   k['state_columns'](cfg['columns']), k['counts'](cfg)) -%}
    {%- set rewritten = result['rewritten'] -%}
    {%- set plan = result['plan'] -%}
    {%- set before, after = [], [] -%}
    {%- for name in k['count_properties'] -%}
      {%- do before.append((state['properties'][name] | int) if name in state['properties'] else none) -%}
      {%- do after.append(before[-1] + result['delta'][loop.index0] if before[-1] is not none else none) -%}
    {%- endfor -%}
    {%- set counts = spark_cdc._cdc_count_rows(parts, cfg) if recovered or none in before else [after] -%}
  {%- endif -%}

  {% do spark_cdc._cdc_before_view_swap(target_relation) %}
  {%- call statement('cdc_swap') -%}
    {{ k['view_sql'](target_relation, parts, new_version, consumed_through, stats, counts, cfg,
                     {'spark_cdc.last_rewritten_partitions': rewritten}) }}
  {%- endcall -%}
  {%- if plan is not none %}{% do spark_cdc._cdc_parts_finish(target_relation, plan) %}{% endif -%}
  {#- Tables of another layout this --full-refresh replaced. -#}
  {% do spark_cdc._cdc_drop_other_versions(target_relation, -1) %}
  {% do spark_cdc._cdc_drop_state_table(target_relation) %}
{%- endmacro %}
