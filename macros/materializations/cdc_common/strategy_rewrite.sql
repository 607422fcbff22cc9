{#- parquet/orc (no MERGE): write the next state (cdc_scd1) or history (cdc_scd2) into a new
    version table, then swap the target view onto it with one CREATE OR REPLACE VIEW that also
    records the consumed watermark. The table being read (version N) is never the table being
    written (version N+1); a run killed before the swap leaves version N in place. -#}
{% macro _cdc_strategy_rewrite(target_relation, state, cfg, batch_sql, consumed_through, stats) -%}
  {%- set k = spark_cdc._cdc_kind(cfg['materialization']) -%}
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
    {{ spark_cdc._cdc_tblproperties_clause(cfg['tblproperties']) }}
    as
    {{ spark_cdc._cdc_state_or_empty(k['state_sql'](batch_sql, old_relation, *spark_cdc._cdc_apply_args(cfg)), empty) }}
  {%- endcall -%}

  {%- set counts = [[0, 0]] if empty else spark_cdc._cdc_count_rows(new_relation, cfg) -%}
  {%- call statement('cdc_swap') -%}
    {{ k['view_sql'](target_relation, new_relation, new_version, consumed_through, stats, counts, cfg) }}
  {%- endcall -%}
  {% do spark_cdc._cdc_drop_other_versions(target_relation, new_version) %}
{%- endmacro %}
