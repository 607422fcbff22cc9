{#- cdc_scd2: a history table (one row per version of each key) kept in step with the canonical
    change stream. The model's SQL (or Python DataFrame) selects changes shaped like spark_cdc's
    cdc_changes; each run applies the ones loaded since the last run. See docs/cdc_scd2.md. -#}
{% materialization cdc_scd2, adapter='spark', supported_languages=['sql', 'python'] %}
  {%- set language = model['language'] -%}
  {%- set cfg = spark_cdc._cdc_scd2_validate(model, config) -%}
  {%- do cfg.update({'full_refresh': should_full_refresh()}) -%}
  {%- set target_relation = api.Relation.create(database=database, schema=schema, identifier=model['alias'], type='view') -%}
  {%- set existing = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
  {%- set state = spark_cdc._cdc_read_state(existing if existing is not none and existing.is_view else none) -%}
  {%- set foreign = existing is not none and (not state['owned'] or state['materialization'] != 'cdc_scd2') -%}

  {%- if foreign -%}
    {%- if cfg['full_refresh'] -%}
      {%- if not state['owned'] -%}
        {% do adapter.drop_relation(existing) %}
      {%- endif -%}
    {%- else -%}
      {% set msg %}
spark_cdc: relation {{ existing }} exists but was not built by cdc_scd2 (model '{{ model['name'] }}'{{ ", built by " ~ state['materialization'] if state['owned'] else "" }}).
Fix: run once with --full-refresh to replace it, or give the model another alias.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
  {%- endif -%}

  {% do spark_cdc._cdc_check_storage(target_relation, state, cfg, 'cdc_scd2') %}

  {{ run_hooks(pre_hooks) }}

  {%- set input_relation = spark_cdc._cdc_input_relation(target_relation, language, compiled_code) -%}
  {%- if language == 'python' -%}
    {%- call statement('cdc_input', language='python') -%}
{{ spark_cdc._cdc_python_input_code(input_relation, compiled_code) }}
    {%- endcall -%}
  {%- endif -%}
  {%- set consumed = none if cfg['full_refresh'] else state['consumed_through'] -%}
  {%- set batch_sql = spark_cdc.cdc_batch_sql(input_relation, cfg['source_table'], consumed, cfg['cdc_format'], rebuild_keys=true,
                                              sequence_by=cfg['sequence_by'], apply_truncates=(cfg['truncate_handling'] == 'apply')) -%}
  {%- set probe = run_query('select count(_op), cast(max(_loaded_at) as string) from (' ~ batch_sql ~ ') as b') -%}
  {%- set stats = {'changes': probe[0][0]} -%}
  {%- set consumed_through = probe[0][1] or consumed -%}

  {%- if stats['changes'] == 0 and state['version'] is not none and not cfg['full_refresh'] -%}
    {#- Nothing new: the target stays byte-for-byte as it is. -#}
    {%- call statement('main') -%}
      select 'spark_cdc: no new changes for {{ model['name'] }}' as status
    {%- endcall -%}
  {%- else -%}
    {%- if cfg['infer_columns'] -%}
      {% do spark_cdc._cdc_resolve_columns(cfg, target_relation, state, batch_sql) %}
    {%- endif -%}
    {%- set batch_sql = spark_cdc._cdc_screen_batch(target_relation, cfg, batch_sql) -%}
    {%- if cfg['file_format'] in spark_cdc._cdc_merge_formats() -%}
      {% do spark_cdc._cdc_scd2_merge(target_relation, state, cfg, batch_sql, consumed_through, stats) %}
      {%- if cfg['full_refresh'] %}{% do spark_cdc._cdc_drop_parts_tables(target_relation) %}{% endif -%}
    {%- elif spark_cdc._cdc_uses_partitions(cfg) -%}
      {% do spark_cdc._cdc_scd2_partitions(target_relation, state, cfg, batch_sql, consumed_through, stats) %}
    {%- else -%}
      {% do spark_cdc._cdc_scd2_rewrite(target_relation, state, cfg, batch_sql, consumed_through, stats) %}
      {%- if cfg['full_refresh'] %}{% do spark_cdc._cdc_drop_state_table(target_relation) %}{% do spark_cdc._cdc_drop_parts_tables(target_relation) %}{% endif -%}
    {%- endif -%}
  {%- endif -%}

  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
