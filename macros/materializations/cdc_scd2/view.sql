{#- The cdc_scd2 pieces the shared body and strategies (cdc_common/kind.sql) take: the target view
    and the counts its TBLPROPERTIES record. -#}

{#- The two counts the target's TBLPROPERTIES record, as aggregates over its physical table (the
    truncate marker excluded by the caller): versions the view shows (with delete_handling
    'invalidate' the stored tombstones are hidden, so not counted) and current, not deleted rows. -#}
{% macro _cdc_scd2_counts(cfg) -%}
  {{ return(['count_if(not _cdc_is_deleted)' if cfg['delete_handling'] == 'invalidate' else 'count(*)',
             'count_if(_cdc_is_current and not _cdc_is_deleted)']) }}
{%- endmacro %}

{#- The target view over physical table `new_relation` (a version table, or the MERGE state table),
    recording version and watermark in its TBLPROPERTIES; shared by the three strategies
    (cdc_common/strategy_merge.sql, strategy_partitions.sql, strategy_rewrite.sql). -#}
{% macro _cdc_scd2_view_sql(target_relation, new_relation, new_version, consumed_through, stats, counts, cfg, extra_properties={}) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set meta = cfg['meta_column_names'] -%}
  {%- set marker = spark_cdc._sql_string(spark_cdc._truncate_marker_key()) -%}
    create or replace view {{ target_relation }}
    {{ spark_cdc._cdc_view_properties('cdc_scd2', new_version, consumed_through, stats, counts, extra_properties) }}
    as
    select
      {%- for c in cfg['columns'] %}
      {{ q(c.name) }},
      {%- endfor %}
      _cdc_valid_from as {{ q(meta['valid_from']) }},
      {%- if cfg['valid_to_current'] %}
      case when _cdc_is_current then cast({{ cfg['valid_to_current'] }} as timestamp) else _cdc_valid_to end as {{ q(meta['valid_to']) }},
      {%- else %}
      _cdc_valid_to as {{ q(meta['valid_to']) }},
      {%- endif %}
      _cdc_valid_from_seq as {{ q(meta['valid_from_seq']) }},
      _cdc_valid_to_seq as {{ q(meta['valid_to_seq']) }},
      _cdc_is_current as {{ q(meta['is_current']) }},
      _cdc_is_deleted as {{ q(meta['is_deleted']) }},
      _cdc_op as {{ q(meta['op']) }},
      _cdc_seq as {{ q(meta['seq']) }},
      _cdc_commit_ts as {{ q(meta['commit_ts']) }}
    from {{ new_relation }}
    where _cdc_key != {{ marker }}
    {%- if cfg['delete_handling'] == 'invalidate' %}
      and not _cdc_is_deleted
    {%- endif %}
{%- endmacro %}
