{#- parquet/orc (no MERGE): write the next state into a new version table, then swap the target
    view onto it with one CREATE OR REPLACE VIEW that also records the consumed watermark. The table
    being read (version N) is never the table being written (version N+1). -#}
{% macro _cdc_scd1_rewrite(target_relation, state, cfg, batch_sql, consumed_through, stats) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set old_relation = none -%}
  {%- if state['version'] is not none and not cfg['full_refresh'] -%}
    {%- set old_relation = spark_cdc._cdc_version_relation(target_relation, state['version']) -%}
  {%- endif -%}
  {%- set new_version = (state['version'] or 0) + 1 -%}
  {%- set new_relation = spark_cdc._cdc_version_relation(target_relation, new_version) -%}
  {#- An orphan of a run killed after writing this version but before the swap. -#}
  {% do adapter.drop_relation(new_relation) %}
  {%- set empty = stats['changes'] == 0 and old_relation is none -%}

  {%- call statement('main') -%}
    create table {{ new_relation }}
    using {{ cfg['file_format'] }}
    {%- if cfg['partition_by'] %}
    partitioned by ({% for p in cfg['partition_by'] %}{{ q(p) }}{{ ', ' if not loop.last }}{% endfor %})
    {%- endif %}
    as
    {{ spark_cdc._cdc_state_or_empty(spark_cdc.scd1_state_sql(batch_sql, old_relation, cfg['columns'], cfg['key_columns'], cfg['cdc_format']), empty) }}
  {%- endcall -%}

  {%- set counts = [[0, 0]] if empty else run_query('select count_if(not _cdc_deleted), count_if(_cdc_deleted) from ' ~ new_relation ~ " where _cdc_key != '" ~ spark_cdc._truncate_marker_key() ~ "'") -%}
  {%- call statement('cdc_swap') -%}
    {{ spark_cdc._cdc_scd1_view_sql(target_relation, new_relation, new_version, consumed_through, stats, counts, cfg) }}
  {%- endcall -%}
  {% do spark_cdc._cdc_drop_other_versions(target_relation, new_version) %}
{%- endmacro %}

{#- The target view over physical table `new_relation` (a version table, or the MERGE state table),
    recording version and watermark in its TBLPROPERTIES; shared by both strategies. -#}
{% macro _cdc_scd1_view_sql(target_relation, new_relation, new_version, consumed_through, stats, counts, cfg, extra_properties={}) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set meta = cfg['meta_column_names'] -%}
    create or replace view {{ target_relation }}
    tblproperties (
      'spark_cdc.materialization' = 'cdc_scd1',
      'spark_cdc.version' = '{{ new_version }}',
      'spark_cdc.consumed_through' = '{{ consumed_through or "" }}',
      'spark_cdc.last_invocation_id' = '{{ invocation_id }}',
      'spark_cdc.last_batch_changes' = '{{ stats["changes"] }}',
      {%- for k, v in extra_properties.items() %}
      '{{ k }}' = '{{ v }}',
      {%- endfor %}
      'spark_cdc.current_rows' = '{{ counts[0][0] }}',
      'spark_cdc.tombstones' = '{{ counts[0][1] }}'
    )
    as
    select
      {%- for c in cfg['columns'] %}
      {{ q(c.name) }},
      {%- endfor %}
      _cdc_op as {{ q(meta['op']) }},
      _cdc_seq as {{ q(meta['seq']) }},
      _cdc_commit_ts as {{ q(meta['commit_ts']) }},
      _cdc_applied_at as {{ q(meta['applied_at']) }}
      {%- if cfg['delete_handling'] == 'flag' %},
      _cdc_deleted as {{ q(meta['deleted']) }}
      {%- endif %}
    from {{ new_relation }}
    where _cdc_key != '{{ spark_cdc._truncate_marker_key() }}'
    {%- if cfg['delete_handling'] == 'remove' %}
      and not _cdc_deleted
    {%- endif %}
{%- endmacro %}
