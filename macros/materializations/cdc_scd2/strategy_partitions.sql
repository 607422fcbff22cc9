{#- Partitioned parquet/orc: one persistent partitioned table `<model>__cdc_parts` of which a run
    rewrites only the partitions its batch touches, then swaps the target view (watermark) as the
    versioned rewrite does. Plan, crash safety and garbage collection: cdc_common/partition_storage.sql.
    Unpartitioned parquet/orc targets stay on strategy_rewrite.sql (a partition is the unit a
    metastore can switch atomically; without partitions the unit is the table, i.e. a new version). -#}
{% macro _cdc_scd2_partitions(target_relation, state, cfg, batch_sql, consumed_through, stats) -%}
  {%- set parts = spark_cdc._cdc_parts_relation(target_relation) -%}
  {%- set new_version = (state['version'] or 0) + 1 -%}
  {%- set marker = spark_cdc._sql_string(spark_cdc._truncate_marker_key()) -%}
  {%- set plan = none -%}
  {%- if state['version'] is none or cfg['full_refresh'] -%}
    {%- set rewritten = spark_cdc._cdc_parts_create(target_relation, cfg,
          spark_cdc.scd2_state_sql(batch_sql, none, cfg["columns"], cfg["key_columns"], cfg["cdc_format"], cfg["track_columns"])) -%}
    {%- set counts = run_query('select ' ~ spark_cdc._cdc_scd2_counts(cfg) | join(', ') ~ ' from ' ~ parts ~ ' where _cdc_key != ' ~ marker) -%}
  {%- else -%}
    {%- set recovered = spark_cdc._cdc_parts_recover(target_relation) -%}
    {%- set touched = spark_cdc._cdc_parts_touched(target_relation, batch_sql, cfg) -%}
    {%- set result = spark_cdc._cdc_parts_rewrite(target_relation, cfg, touched,
          spark_cdc.scd2_state_sql(batch_sql, touched, cfg["columns"], cfg["key_columns"], cfg["cdc_format"], cfg["track_columns"]),
          spark_cdc._cdc_scd2_state_columns(cfg['columns']), spark_cdc._cdc_scd2_counts(cfg)) -%}
    {%- set rewritten = result['rewritten'] -%}
    {%- set plan = result['plan'] -%}
    {%- set before = [spark_cdc._cdc_view_number(target_relation, 'spark_cdc.versions'),
                      spark_cdc._cdc_view_number(target_relation, 'spark_cdc.current_rows')] -%}
    {%- if recovered or none in before -%}
      {%- set counts = run_query('select ' ~ spark_cdc._cdc_scd2_counts(cfg) | join(', ') ~ ' from ' ~ parts ~ ' where _cdc_key != ' ~ marker) -%}
    {%- else -%}
      {%- set counts = [[before[0] + result['delta'][0], before[1] + result['delta'][1]]] -%}
    {%- endif -%}
  {%- endif -%}

  {%- call statement('cdc_swap') -%}
    {{ spark_cdc._cdc_scd2_view_sql(target_relation, parts, new_version, consumed_through, stats, counts, cfg,
                                    {'spark_cdc.last_rewritten_partitions': rewritten}) }}
  {%- endcall -%}
  {%- if plan is not none %}{% do spark_cdc._cdc_parts_finish(target_relation, plan) %}{% endif -%}
  {#- Tables of another layout this --full-refresh replaced. -#}
  {% do spark_cdc._cdc_drop_other_versions(target_relation, -1) %}
  {% do spark_cdc._cdc_drop_state_table(target_relation) %}
{%- endmacro %}
