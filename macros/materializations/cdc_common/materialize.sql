{#- The body of both CDC materializations, in two halves around the one statement dbt runs only
    from the `{% materialization %}` block itself (a Python model's code: submit_python_job refuses
    any other caller), so the blocks of cdc_scd1/cdc_scd1.sql and cdc_scd2/cdc_scd2.sql are
        prepare(kind) -> [Python model: run its input code] -> apply(run).
    The model's SQL (or Python DataFrame) selects changes shaped like spark_cdc's cdc_changes; each
    run applies the ones loaded since the last run with the strategy of the target's storage
    (strategy_merge.sql, strategy_partitions.sql, strategy_rewrite.sql). What differs by kind comes
    from _cdc_kind (kind.sql). -#}

{#- The first half: configuration (every error before anything is written), the foreign-target
    and storage checks, pre-hooks and the input relation. Returns what apply needs, with the Python
    input code the block runs for a Python model. -#}
{% macro _cdc_materialize_prepare(kind) -%}
  {%- set k = spark_cdc._cdc_kind(kind) -%}
  {%- set cfg = k['validate'](model, config) -%}
  {%- do cfg.update({'full_refresh': should_full_refresh()}) -%}
  {%- set target_relation = api.Relation.create(database=database, schema=schema, identifier=model['alias'], type='view') -%}
  {%- set existing = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
  {%- set state = spark_cdc._cdc_read_state(existing if existing is not none and existing.is_view else none) -%}

  {#- A target built by the other CDC materialization has another physical layout. -#}
  {%- if existing is not none and (not state['owned'] or state['materialization'] not in k['accepts']) -%}
    {%- if cfg['full_refresh'] -%}
      {%- if k['drops_owned_foreign'] or not state['owned'] -%}
        {% do adapter.drop_relation(existing) %}
      {%- endif -%}
    {%- else -%}
      {% set msg %}
spark_cdc: relation {{ existing }} exists but was not built by {{ kind }} (model '{{ model['name'] }}'{{ ", built by " ~ state['materialization'] if k['names_builder'] and state['owned'] else "" }}).
Fix: run once with --full-refresh to replace it, or give the model another alias.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
  {%- endif -%}

  {% do spark_cdc._cdc_check_storage(target_relation, state, cfg, kind) %}
  {% do spark_cdc._cdc_analyzer_headroom() %}

  {{ run_hooks(pre_hooks) }}

  {%- set input_relation = spark_cdc._cdc_input_relation(target_relation, model['language'], compiled_code) -%}
  {%- set python_code = spark_cdc._cdc_python_input_code(input_relation, compiled_code) if model['language'] == 'python' else none -%}
  {{ return({'cfg': cfg, 'target_relation': target_relation, 'state': state,
             'input_relation': input_relation, 'python_code': python_code}) }}
{%- endmacro %}

{#- The second half: the batch since the watermark, written once (batch_table.sql) when it has
    changes, then the storage's strategy (or nothing when the batch is empty), post-hooks; returns
    the materialization's result. -#}
{% macro _cdc_materialize_apply(run) -%}
  {%- set cfg, target_relation, state = run['cfg'], run['target_relation'], run['state'] -%}
  {%- set consumed = none if cfg['full_refresh'] else state['consumed_through'] -%}
  {%- set batch_sql = spark_cdc.cdc_batch_sql(run['input_relation'], cfg['source_table'], consumed, cfg['cdc_format'], rebuild_keys=true,
                                              sequence_by=cfg['sequence_by'], apply_truncates=(cfg['truncate_handling'] == 'apply')) -%}
  {#- The probe reads the batch alone: an idle run (most runs of most targets) then pays for no check
      of the values (_cdc_batch_rows_sql, in the batch table's write), whose plan is several times
      larger. -#}
  {%- set probe = run_query('select count(_op), cast(max(_loaded_at) as string) from (' ~ batch_sql ~ ') as b') -%}
  {%- set stats = {'changes': probe[0][0]} -%}
  {%- set consumed_through = probe[0][1] or consumed -%}

  {%- if stats['changes'] == 0 and state['version'] is not none and not cfg['full_refresh'] -%}
    {#- Nothing new: the target stays byte-for-byte as it is. -#}
    {%- call statement('main') -%}
      select 'spark_cdc: no new changes for {{ model['name'] }}' as status
    {%- endcall -%}
  {%- else -%}
    {#- Columns inferred from the images are resolved first: a mistake they reveal stops the run
        before anything is written. -#}
    {%- if cfg['infer_columns'] -%}
      {% do spark_cdc._cdc_resolve_columns(cfg, target_relation, state, batch_sql) %}
    {%- endif -%}
    {%- set batch_sql = spark_cdc._cdc_write_batch(target_relation, cfg, batch_sql) -%}
    {%- set facts = spark_cdc._cdc_batch_facts(cfg, state, batch_sql) -%}
    {%- set batch_sql = spark_cdc._cdc_screen_batch(target_relation, cfg, batch_sql, facts) -%}
    {%- do cfg.update({'simple_batch': facts['simple']}) -%}
    {%- do stats.update({'simple_batch': facts['simple'], 'whole_images': facts['whole_images']}) -%}
    {%- if cfg['file_format'] in spark_cdc._cdc_merge_formats() -%}
      {% do spark_cdc._cdc_strategy_merge(target_relation, state, cfg, batch_sql, consumed_through, stats) %}
      {%- if cfg['full_refresh'] %}{% do spark_cdc._cdc_drop_parts_tables(target_relation) %}{% endif -%}
    {%- elif spark_cdc._cdc_uses_partitions(cfg) -%}
      {% do spark_cdc._cdc_strategy_partitions(target_relation, state, cfg, batch_sql, consumed_through, stats) %}
    {%- else -%}
      {% do spark_cdc._cdc_strategy_rewrite(target_relation, state, cfg, batch_sql, consumed_through, stats) %}
      {%- if cfg['full_refresh'] %}{% do spark_cdc._cdc_drop_state_table(target_relation) %}{% do spark_cdc._cdc_drop_parts_tables(target_relation) %}{% endif -%}
    {%- endif -%}
    {% do adapter.drop_relation(spark_cdc._cdc_batch_relation(target_relation)) %}
  {%- endif -%}

  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{%- endmacro %}

{#- Spark 3.5's analyzer resolves nested expressions one level per iteration and stops at
    spark.sql.analyzer.maxIterations (100): the checks of a batch with values to reject nest deeper
    than that (a typed or partitioned target failed with "Max iterations (100) reached for batch
    Resolution"). On Spark 3 the session's limit is raised to 1000 (a limit, not a cost: resolution
    stops as soon as the plan is resolved); Spark 4 resolves these within 100 and is left alone. -#}
{% macro _cdc_analyzer_headroom() -%}
  {%- if spark_cdc._spark3() -%}
    {%- call statement('cdc_analyzer_headroom') -%}
      set spark.sql.analyzer.maxIterations = 1000
    {%- endcall -%}
  {%- endif -%}
{%- endmacro %}

{#- What the run needs to know about its written batch, from one query over the batch table:
    `rejected`, how many changes fail the target's `checks` (_cdc_reject_checks, built once here for
    _cdc_screen_batch), and `simple`, whether the batch and the stored rows hold whole images only:
    no truncate, no partial image (an upsert whose present_columns leave out one of the target's
    value columns: CockroachDB lists them for every change; Debezium leaves out unchanged TOASTed
    values). Decided once per run, from the batch and what the target's view recorded:
    - cdc_scd1 (the short statement, _scd1_simple_state_sql): a target written from scratch or whose
      stored rows hold no column older than their last change (spark_cdc.partial_rows is 0;
      unknown on a target written before that count existed);
    - cdc_scd2 (scd2_state_sql's whole_images): a target written from scratch or whose every
      stored change had a whole image of the same value columns and no truncate was applied
      (spark_cdc.whole_images: `whole_images`, a digest of the value columns' names, is recorded
      while that holds and cleared for good once it does not).
    A target that leaves the simple path stays correct on the general one. -#}
{% macro _cdc_batch_facts(cfg, state, batch_sql) -%}
  {%- set checks = spark_cdc._cdc_reject_checks(cfg) -%}
  {%- set value_columns = cfg['columns'] | rejectattr('name', 'in', cfg['key_columns']) | list -%}
  {%- set digest = local_md5(value_columns | map(attribute='name') | map('lower') | sort | join('/')) -%}
  {%- set fresh = cfg['full_refresh'] or state['version'] is none -%}
  {%- set stored_whole = fresh or (state['partial_rows'] == 0 if cfg['materialization'] == 'cdc_scd1'
                                   else state['properties'].get('spark_cdc.whole_images') == digest) -%}
  {%- set counts = {} -%}
  {%- if checks -%}
    {%- do counts.update({'rejected': spark_cdc._cdc_rejects_count()}) -%}
  {%- endif -%}
  {%- if stored_whole -%}
    {%- set partial = "s._op != 'delete' and " ~ spark_cdc._cdc_lacks_value_column('s._present', value_columns) -%}
    {%- do counts.update({'complex': "count_if(s._op = 'truncate' or (" ~ partial ~ "))"}) -%}
  {%- endif -%}
  {%- set facts = {'checks': checks, 'rejected': 0, 'simple': false} -%}
  {%- if counts -%}
    {%- set row = run_query('select ' ~ counts.values() | join(', ') ~ ' from (' ~ batch_sql ~ ') as s')[0] -%}
    {%- for name in counts -%}{%- do facts.update({name: row[loop.index0]}) -%}{%- endfor -%}
    {%- do facts.update({'simple': facts.get('complex') == 0}) -%}
  {%- endif -%}
  {%- do facts.update({'whole_images': digest if facts['simple'] else ''}) -%}
  {{ return(facts) }}
{%- endmacro %}
