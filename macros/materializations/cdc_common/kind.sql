{#- What differs between cdc_scd1 and cdc_scd2 for the body they share (materialize.sql) and the
    three strategies (strategy_merge.sql, strategy_partitions.sql, strategy_rewrite.sql): the
    macros that validate the configuration, compute the next state (scd1: one row per key; scd2: the
    versions of each key), MERGE it and swap the target view, and the constants of the two
    materializations' foreign-target rules and TBLPROPERTIES counts.
    - accepts: the spark_cdc.materialization values of a target this kind continues (none: an owned
      view without it, which cdc_scd1 continues).
    - drops_owned_foreign: whether --full-refresh drops a foreign target spark_cdc built (the other
      kind's view) before rebuilding (cdc_scd1); cdc_scd2 leaves it to its CREATE OR REPLACE VIEW.
      A relation spark_cdc did not build is dropped by both.
    - names_builder: whether the "was not built by" error names the materialization that built it.
    - apply_config: the cfg entries passed to state_sql and merge_source_sql after (batch, relation)
      (`simple_batch`, set by the run: _cdc_batch_facts; cdc_scd2's state_sql takes it as
      whole_images).
    - count_properties: the TBLPROPERTIES of the counts `counts(cfg)` computes, in order. -#}
{% macro _cdc_kind(kind) -%}
  {%- set apply_config = ['columns', 'key_columns', 'cdc_format'] -%}
  {%- if kind == 'cdc_scd1' -%}
    {{ return({
        'validate': spark_cdc._cdc_scd1_validate,
        'accepts': [none, 'cdc_scd1'],
        'drops_owned_foreign': true,
        'names_builder': false,
        'apply_config': apply_config + ['simple_batch'],
        'state_sql': spark_cdc.scd1_state_sql,
        'merge_source_sql': spark_cdc.scd1_merge_source_sql,
        'merge_sql': spark_cdc.scd1_merge_sql,
        'state_columns': spark_cdc._cdc_scd1_state_columns,
        'counts': spark_cdc._cdc_scd1_counts,
        'count_properties': ['spark_cdc.current_rows', 'spark_cdc.tombstones', 'spark_cdc.partial_rows'],
        'view_sql': spark_cdc._cdc_scd1_view_sql,
    }) }}
  {%- elif kind == 'cdc_scd2' -%}
    {{ return({
        'validate': spark_cdc._cdc_scd2_validate,
        'accepts': ['cdc_scd2'],
        'drops_owned_foreign': false,
        'names_builder': true,
        'apply_config': apply_config + ['track_columns', 'simple_batch'],
        'state_sql': spark_cdc.scd2_state_sql,
        'merge_source_sql': spark_cdc.scd2_merge_source_sql,
        'merge_sql': spark_cdc.scd2_merge_sql,
        'state_columns': spark_cdc._cdc_scd2_state_columns,
        'counts': spark_cdc._cdc_scd2_counts,
        'count_properties': ['spark_cdc.versions', 'spark_cdc.current_rows'],
        'view_sql': spark_cdc._cdc_scd2_view_sql,
    }) }}
  {%- else -%}
    {{ exceptions.raise_compiler_error("spark_cdc: unknown CDC materialization '" ~ kind ~ "' (expected cdc_scd1 or cdc_scd2).") }}
  {%- endif -%}
{%- endmacro %}

{#- The arguments of the kind's state_sql and merge_source_sql after (batch_sql, relation): the
    columns, key columns and cdc_format, and for cdc_scd2 the tracked columns. -#}
{% macro _cdc_apply_args(cfg) -%}
  {%- set args = [] -%}
  {%- for name in spark_cdc._cdc_kind(cfg['materialization'])['apply_config'] -%}
    {%- do args.append(cfg[name]) -%}
  {%- endfor -%}
  {{ return(args) }}
{%- endmacro %}

{#- The target's TBLPROPERTIES counts (the kind's count_properties) over its physical table
    `relation`, the truncate marker left out: run_query's table of one row. -#}
{% macro _cdc_count_rows(relation, cfg) -%}
  {%- set counts = spark_cdc._cdc_kind(cfg['materialization'])['counts'](cfg) -%}
  {%- set marker = spark_cdc._sql_string(spark_cdc._truncate_marker_key()) -%}
  {{ return(run_query('select ' ~ counts | join(', ') ~ ' from ' ~ relation ~ ' where _cdc_key != ' ~ marker)) }}
{%- endmacro %}

{#- The TBLPROPERTIES clause of a target view of kind `kind` (cdc_scd1 / cdc_scd2): materialization,
    version, consumed watermark, invocation, the batch's change count, whether the run took the
    simple path (_cdc_batch_facts; cdc_scd2: and spark_cdc.whole_images, which the next run reads),
    `extra_properties`, and the kind's counts (count_properties, from `counts`: _cdc_count_rows's
    table). -#}
{% macro _cdc_view_properties(kind, new_version, consumed_through, stats, counts, extra_properties) -%}
  {%- set names = spark_cdc._cdc_kind(kind)['count_properties'] -%}
    tblproperties (
      'spark_cdc.materialization' = '{{ kind }}',
      'spark_cdc.version' = '{{ new_version }}',
      'spark_cdc.consumed_through' = '{{ consumed_through or "" }}',
      'spark_cdc.last_invocation_id' = '{{ invocation_id }}',
      'spark_cdc.last_batch_changes' = '{{ stats["changes"] }}',
      'spark_cdc.last_batch_simple' = '{{ stats.get("simple_batch", false) | lower }}',
      {%- if kind == 'cdc_scd2' %}
      'spark_cdc.whole_images' = '{{ stats.get("whole_images", "") }}',
      {%- endif %}
      {%- for k, v in extra_properties.items() %}
      '{{ k }}' = '{{ v }}',
      {%- endfor %}
      {%- for name in names %}
      '{{ name }}' = '{{ counts[0][loop.index0] }}'{{ ',' if not loop.last }}
      {%- endfor %}
    )
{%- endmacro %}
