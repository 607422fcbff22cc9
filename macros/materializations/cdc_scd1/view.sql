{#- The cdc_scd1 pieces the shared body and strategies (cdc_common/kind.sql) take: the target view
    and the counts its TBLPROPERTIES record. -#}

{#- The counts the target's TBLPROPERTIES record (spark_cdc.current_rows, spark_cdc.tombstones,
    spark_cdc.partial_rows), as aggregates over its physical table (the truncate marker excluded by
    the caller): rows not deleted, the hidden tombstones of deleted keys, and rows holding a column
    older than their last change (a later batch can only take the short statement,
    _scd1_simple_state_sql, while there are none). -#}
{% macro _cdc_scd1_counts(cfg) -%}
  {{ return(['count_if(not _cdc_deleted)', 'count_if(_cdc_deleted)', 'count_if(cardinality(_cdc_col_ords) > 0)']) }}
{%- endmacro %}

{#- The target view over physical table `new_relation` (a version table, or the MERGE state table),
    recording version and watermark in its TBLPROPERTIES; shared by the three strategies
    (cdc_common/strategy_merge.sql, strategy_partitions.sql, strategy_rewrite.sql). -#}
{% macro _cdc_scd1_view_sql(target_relation, new_relation, new_version, consumed_through, stats, counts, cfg, extra_properties={}) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set meta = cfg['meta_column_names'] -%}
    create or replace view {{ target_relation }}
    {{ spark_cdc._cdc_view_properties('cdc_scd1', new_version, consumed_through, stats, counts, extra_properties) }}
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
    where _cdc_key != {{ spark_cdc._sql_string(spark_cdc._truncate_marker_key()) }}
    {%- if cfg['delete_handling'] == 'remove' %}
      and not _cdc_deleted
    {%- endif %}
{%- endmacro %}
