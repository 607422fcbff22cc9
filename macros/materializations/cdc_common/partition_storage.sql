{#- Storage of PARTITIONED parquet/orc CDC targets: one persistent partitioned table
    `<model>__cdc_parts` behind the target view, of which each run rewrites only the partitions its
    batch touches. Parquet cannot MERGE, and Spark cannot INSERT OVERWRITE a table it reads, so a run
      1. computes the next state of only the touched keys (the MERGE strategy's plan: the touched
         rows, then scd1_state_sql / scd2_state_sql over them), both written to work tables
         `<model>__cdc_touched` / `<model>__cdc_next` for this run;
      2. takes as touched partitions those holding a stored row of a touched key, plus those of the
         new rows (a key can move between partitions; a truncate touches every key, so every
         partition; the hidden truncate marker's partition only when the marker changes);
      3. writes the complete new content of those partitions (stored rows of untouched keys + new
         rows) into a NEW directory under the table (`_cdc_r<version>_<run>`), through an external
         stage table `<model>__cdc_stage`;
      4. stores the switch plan in the stage table's TBLPROPERTIES (one metastore operation: the
         commit point of the data; split over numbered properties, since the metastore keeps at
         most 4,000 characters per value), then points each touched partition at its new directory
         (ADD PARTITION / SET LOCATION, each one atomic metastore operation) and drops emptied ones;
      5. swaps the view (watermark, counts, rewritten partitions) last;
      6. deletes the replaced directories, then the stage table.
    Crash safety: before (4) nothing visible changed; an unfinished stage is dropped by the next run.
    After it, the next run first ROLLS FORWARD the stored plan (every step is idempotent), so the
    partitions hold exactly what the killed run meant to write, whatever partition it died at; then
    it re-reads the batch behind the old watermark and re-applies it to a state that already holds
    it, a no-op as for the MERGE strategy (see strategy_merge.sql). Rolling forward, rather than
    re-applying the batch to a half-switched table, matters when a key moved between partitions:
    with its old partition switched and its new one not, the key would be missing, and its partial
    images could not be rebuilt. Readers of the view between the crash and the next run can see
    some partitions switched and others not (each partition is whole, old or new).
    Emptied partitions are dropped (dropping a partition of a managed table deletes its directory).
    Replaced directories are deleted through `<model>__cdc_gc`, a managed table whose partitions are
    pointed at them and dropped: plain SQL has no other way to delete a directory. -#}

{% macro _cdc_parts_relation(target_relation, suffix='parts') -%}
  {{ return(api.Relation.create(database=target_relation.database, schema=target_relation.schema,
                                identifier=target_relation.identifier ~ '__cdc_' ~ suffix, type='table')) }}
{%- endmacro %}

{#- True when a target of this configuration uses this storage. -#}
{% macro _cdc_uses_partitions(cfg) -%}
  {{ return((cfg['partition_by'] | length) > 0 and cfg['file_format'] not in spark_cdc._cdc_merge_formats()) }}
{%- endmacro %}

{#- Drop this storage's tables (a --full-refresh, or a switch to another layout). Dropping the
    managed parts table deletes its directory, run directories included. -#}
{% macro _cdc_drop_parts_tables(target_relation) -%}
  {%- for suffix in ['stage', 'parts', 'gc', 'touched', 'next'] -%}
    {% do adapter.drop_relation(spark_cdc._cdc_parts_relation(target_relation, suffix)) %}
  {%- endfor -%}
{%- endmacro %}

{#- First build / --full-refresh: the whole state, written once (an orphan of a first build killed
    before its view existed is replaced). Parquet has no atomic CREATE OR REPLACE, so a --full-refresh
    killed between the drop and the write leaves the view without its table; the next run then fails
    asking for --full-refresh again (the data comes back from the change stream). -#}
{% macro _cdc_parts_create(target_relation, cfg, state_sql) -%}
  {% do spark_cdc._cdc_drop_parts_tables(target_relation) %}
  {%- set parts = spark_cdc._cdc_parts_relation(target_relation) -%}
  {%- call statement('main') -%}
    create table {{ parts }}
    using {{ cfg['file_format'] }}
    partitioned by ({{ spark_cdc._cdc_parts_cols(cfg, none) }})
    {{ spark_cdc._cdc_tblproperties_clause(cfg['tblproperties']) }}
    as
    {{ state_sql }}
  {%- endcall -%}
  {%- set n = run_query('show partitions ' ~ parts) -%}
  {{ return(n | length) }}
{%- endmacro %}

{#- Comma-separated quoted partition columns of a partitioned target, optionally qualified with a table
    alias. -#}
{% macro _cdc_parts_cols(cfg, alias) -%}
  {%- for p in cfg['partition_by'] -%}{{ alias ~ '.' if alias }}{{ spark_cdc.quote_identifier(p) }}{{ ', ' if not loop.last }}{%- endfor -%}
{%- endmacro %}

{#- A partition spec (`p = 'v'`, `p = null`) from partition values read as text. -#}
{% macro _cdc_parts_spec(cfg, values) -%}
  {%- for p in cfg['partition_by'] -%}{{ spark_cdc.quote_identifier(p) }} = {{ 'null' if values[loop.index0] is none else spark_cdc._sql_string(values[loop.index0]) }}{{ ', ' if not loop.last }}{%- endfor -%}
{%- endmacro %}

{#- A predicate on `alias` selecting exactly the partitions `partitions` (lists of values as text). -#}
{% macro _cdc_parts_filter(cfg, partitions, alias) -%}
  {%- if not partitions -%}false{%- endif -%}
  {%- for values in partitions -%}
  ({% for p in cfg['partition_by'] %}cast({{ alias }}.{{ spark_cdc.quote_identifier(p) }} as string) <=> {{ 'null' if values[loop.index0] is none else spark_cdc._sql_string(values[loop.index0]) }}{{ ' and ' if not loop.last }}{% endfor %}){{ ' or ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}

{#- Rows of `rows_sql` as lists of text; every value is read with a one-character prefix, because
    run_query guesses types from text ('1' would come back as a number, '2024-01-01' as a date). -#}
{% macro _cdc_parts_text_rows(columns_sql, from_sql, width) -%}
  {%- set result = [] -%}
  {%- for row in run_query('select distinct ' ~ columns_sql ~ ' from ' ~ from_sql) -%}
    {%- set values = [] -%}
    {%- for i in range(width) -%}{%- do values.append(none if row[i] is none else row[i][1:]) -%}{%- endfor -%}
    {%- do result.append(values) -%}
  {%- endfor -%}
  {{ return(result) }}
{%- endmacro %}

{#- Partition columns of `alias` (then `extra` expressions) as prefixed text, for _cdc_parts_text_rows. -#}
{% macro _cdc_parts_text_cols(cfg, alias, extra=[]) -%}
  {%- set cols = [] -%}
  {%- for p in cfg['partition_by'] -%}{%- do cols.append("concat('v', cast(" ~ alias ~ "." ~ spark_cdc.quote_identifier(p) ~ " as string))") -%}{%- endfor -%}
  {%- for e in extra -%}{%- do cols.append("concat('v', " ~ e ~ ")") -%}{%- endfor -%}
  {{ return(cols | join(', ')) }}
{%- endmacro %}

{#- The directory of a row's file. _metadata.file_path is URL-encoded (a partition `spare tire` is
    `name=spare%20tire`), while LOCATION takes the path itself: decode it, keeping a literal '+'
    (url_decode would read it as a space). -#}
{% macro _cdc_parts_dir_sql(alias) -%}
url_decode(replace(regexp_replace({{ alias }}._metadata.file_path, '/[^/]*$', ''), '+', '%2B'))
{%- endmacro %}

{#- Called after each partition switch of a run (not of a roll-forward). Integration tests
    override it (dispatch) to stop a run between two switches, as a crash would. -#}
{% macro _cdc_after_partition_switch(parts_relation, switched) -%}
  {{ return(adapter.dispatch('cdc_after_partition_switch', 'spark_cdc')(parts_relation, switched)) }}
{%- endmacro %}

{% macro default__cdc_after_partition_switch(parts_relation, switched) -%}
{%- endmacro %}

{#- Carry out a stored switch plan: new directories in place, emptied partitions dropped, replaced
    directories deleted. Every step is idempotent, so a roll-forward may repeat any of them. -#}
{% macro _cdc_parts_apply_plan(parts, plan, hook) -%}
  {%- for item in plan['switch'] -%}
    {%- call statement('cdc_switch') -%}
      {%- if item[2] == 'add' %}
      alter table {{ parts }} add if not exists partition ({{ item[0] }}) location {{ spark_cdc._sql_string(item[1]) }}
      {%- else %}
      alter table {{ parts }} partition ({{ item[0] }}) set location {{ spark_cdc._sql_string(item[1]) }}
      {%- endif %}
    {%- endcall -%}
    {%- if hook %}{% do spark_cdc._cdc_after_partition_switch(parts, loop.index) %}{% endif -%}
  {%- endfor -%}
  {%- if plan['drop'] -%}
    {%- call statement('cdc_switch') -%}
      alter table {{ parts }} drop if exists {% for spec in plan['drop'] %}partition ({{ spec }}){{ ', ' if not loop.last }}{% endfor %}
    {%- endcall -%}
  {%- endif -%}
  {%- call statement('cdc_switch') -%}
    refresh table {{ parts }}
  {%- endcall -%}
{%- endmacro %}

{#- Deletes the directories that a finished partition switch replaced (the plan's garbage list), through
    a scratch external table <target>__cdc_gc. -#}
{% macro _cdc_parts_collect_garbage(parts, plan) -%}
  {%- if not plan['garbage'] %}{{ return(none) }}{% endif -%}
  {%- set gc = api.Relation.create(database=parts.database, schema=parts.schema,
                                   identifier=parts.identifier[:-('parts' | length)] ~ 'gc', type='table') -%}
  {%- call statement('cdc_gc') -%}
    create table if not exists {{ gc }} (unused int, slot int) using parquet partitioned by (slot)
  {%- endcall -%}
  {%- call statement('cdc_gc') -%}
    alter table {{ gc }} add if not exists {% for d in plan['garbage'] %}partition (slot = {{ loop.index }}) location {{ spark_cdc._sql_string(d) }} {% endfor %}
  {%- endcall -%}
  {%- call statement('cdc_gc') -%}
    alter table {{ gc }} drop if exists {% for d in plan['garbage'] %}partition (slot = {{ loop.index }}){{ ', ' if not loop.last }}{% endfor %}
  {%- endcall -%}
{%- endmacro %}

{#- The switch plan as TBLPROPERTIES for ONE `alter table ... set tblproperties` (the commit point):
    its JSON text cut into pieces `spark_cdc.switch_plan.<i>` of at most 3,000 characters (the Hive
    metastore keeps 4,000 per value: a plan touching a hundred partitions is longer), and their
    count, `spark_cdc.switch_plan.pieces`. -#}
{% macro _cdc_parts_plan_properties(plan) -%}
  {%- set text = tojson(plan) -%}
  {%- set size = 3000 -%}
  {%- set pieces = ((text | length) + size - 1) // size -%}
  'spark_cdc.switch_plan.pieces' = '{{ pieces }}'
  {%- for i in range(pieces) -%}
    , 'spark_cdc.switch_plan.{{ i }}' = {{ spark_cdc._sql_string(text[i * size:(i + 1) * size]) }}
  {%- endfor -%}
{%- endmacro %}

{#- The plan committed in `stage`'s TBLPROPERTIES, as a list: empty when none was committed, else
    the one plan, its pieces joined in order. A piece missing from a committed plan cannot happen
    (one metastore operation wrote them all) and fails the run rather than apply half a plan. -#}
{% macro _cdc_parts_stored_plan(stage) -%}
  {%- set props = {} -%}
  {%- for row in run_query('show tblproperties ' ~ stage) if row[0].startswith('spark_cdc.switch_plan.') -%}
    {%- do props.update({row[0]: row[1]}) -%}
  {%- endfor -%}
  {%- if 'spark_cdc.switch_plan.pieces' not in props -%}{{ return([]) }}{%- endif -%}
  {%- set pieces = [] -%}
  {%- for i in range(props['spark_cdc.switch_plan.pieces'] | int) -%}
    {%- set name = 'spark_cdc.switch_plan.' ~ i -%}
    {%- if name not in props -%}
      {{ exceptions.raise_compiler_error('spark_cdc: the switch plan stored on ' ~ stage ~ ' lacks ' ~ name ~ ', so the interrupted run cannot be rolled forward. Fix: rebuild the target with dbt run --full-refresh --select <this model>.') }}
    {%- endif -%}
    {%- do pieces.append(props[name]) -%}
  {%- endfor -%}
  {{ return([fromjson(pieces | join(''))]) }}
{%- endmacro %}

{#- A stage left by a killed run: roll its plan forward if it was committed, else discard it.
    Returns true when it rolled a plan forward (the view's counts then lag behind the data). -#}
{% macro _cdc_parts_recover(target_relation) -%}
  {%- set parts = spark_cdc._cdc_parts_relation(target_relation) -%}
  {%- set stage = spark_cdc._cdc_parts_relation(target_relation, 'stage') -%}
  {%- if adapter.get_relation(database=stage.database, schema=stage.schema, identifier=stage.identifier) is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set plans = spark_cdc._cdc_parts_stored_plan(stage) -%}
  {%- for plan in plans -%}
    {% do spark_cdc._cdc_parts_apply_plan(parts, plan, false) %}
    {% do spark_cdc._cdc_parts_collect_garbage(parts, plan) %}
  {%- endfor -%}
  {% do adapter.drop_relation(stage) %}
  {{ return(plans | length > 0) }}
{%- endmacro %}

{#- Step 1a: the stored rows the batch can change (the MERGE strategy's touched rows), written to
    the work table `<model>__cdc_touched`: the state SQL, the touched partitions, the stage and the
    counts all read them. Found in two reads, so that the cost follows the batch rather than the
    table: the partitions holding them, from the key column alone (partition values come from
    directory names), then whole rows of only those partitions.
    Work tables rather than cached temporary views: Spark analyses a view's SQL again wherever a
    query names it (seconds for the state SQL, on any data size), and the cached plan was not
    matched, so every read of `next` computed it again (measured: 6 to 9 s per statement on a
    batch of a few rows). A table left by a killed run is replaced by the next one. -#}
{% macro _cdc_parts_touched(target_relation, batch_sql, cfg) -%}
  {%- set parts = spark_cdc._cdc_parts_relation(target_relation) -%}
  {% do spark_cdc._cdc_add_missing_columns(parts, cfg) %}
  {% do spark_cdc._cdc_apply_tblproperties(parts, cfg) %}
  {%- set holding = spark_cdc._cdc_parts_text_rows(
        spark_cdc._cdc_parts_text_cols(cfg, 'x'),
        '(' ~ spark_cdc._cdc_touched_state_sql(batch_sql, parts) ~ ') as x',
        cfg['partition_by'] | length) -%}
  {%- set touched = spark_cdc._cdc_parts_relation(target_relation, 'touched') -%}
  {% do adapter.drop_relation(touched) %}
  {%- call statement('cdc_touched') -%}
    create table {{ touched }}
    using {{ cfg['file_format'] }}
    as
    {{ spark_cdc._cdc_touched_state_sql(batch_sql, parts, spark_cdc._cdc_parts_filter(cfg, holding, 's')) }}
  {%- endcall -%}
  {{ return(touched) }}
{%- endmacro %}

{#- Steps 1b-4: `next_sql` is the state SQL of the touched keys (over `touched`). Returns
    {'rewritten': partitions rewritten, 'delta': each of `count_exprs` over the new rows minus over
    the replaced ones (the view's counts, kept without reading the whole table), 'plan': the plan}. -#}
{% macro _cdc_parts_rewrite(target_relation, cfg, touched, next_sql, state_columns, count_exprs) -%}
  {%- set q = spark_cdc.quote_identifier -%}
  {%- set parts = spark_cdc._cdc_parts_relation(target_relation) -%}
  {%- set stage = spark_cdc._cdc_parts_relation(target_relation, 'stage') -%}
  {%- set marker = spark_cdc._sql_string(spark_cdc._truncate_marker_key()) -%}
  {%- set width = cfg['partition_by'] | length -%}
  {%- set next = spark_cdc._cdc_parts_relation(target_relation, 'next') -%}
  {% do adapter.drop_relation(next) %}
  {%- call statement('cdc_next') -%}
    create table {{ next }}
    using {{ cfg['file_format'] }}
    as
    {{ next_sql }}
  {%- endcall -%}

  {#- 2. Touched partitions. The marker row only when it changes: every run reads it. -#}
  {%- set from_sql -%}
    (select _cdc_key, {{ spark_cdc._cdc_parts_cols(cfg, none) }} from {{ touched }}
     union all select _cdc_key, {{ spark_cdc._cdc_parts_cols(cfg, none) }} from {{ next }}) as x
    where x._cdc_key != {{ marker }}
       or not exists (select 1 from {{ touched }} as t join {{ next }} as n
                      on t._cdc_key = {{ marker }} and n._cdc_key = {{ marker }}
                      where to_json(struct({% for c in state_columns %}t.{{ q(c) }}{{ ', ' if not loop.last }}{% endfor %}))
                          = to_json(struct({% for c in state_columns %}n.{{ q(c) }}{{ ', ' if not loop.last }}{% endfor %})))
  {%- endset -%}
  {%- set touched_parts = spark_cdc._cdc_parts_text_rows(spark_cdc._cdc_parts_text_cols(cfg, 'x'), from_sql, width) -%}

  {#- 3. Their new content, in a directory no partition points at yet. -#}
  {%- set location = [] -%}
  {%- for row in run_query('describe table extended ' ~ parts) if row[0] == 'Location' -%}{%- do location.append(row[1]) -%}{%- endfor -%}
  {%- set run_dir = location[0] ~ '/_cdc_r' ~ (invocation_id | replace('-', '')) -%}
  {% do adapter.drop_relation(stage) %}
  {%- call statement('main') -%}
    create table {{ stage }}
    using {{ cfg['file_format'] }}
    partitioned by ({{ spark_cdc._cdc_parts_cols(cfg, none) }})
    location {{ spark_cdc._sql_string(run_dir) }}
    as
    select {% for c in state_columns %}s.{{ q(c) }}{{ ', ' if not loop.last }}{% endfor %}
    from {{ parts }} as s
    left anti join {{ touched }} as t on s._cdc_key = t._cdc_key
    where {{ spark_cdc._cdc_parts_filter(cfg, touched_parts, 's') }}
    union all
    select {% for c in state_columns %}n.{{ q(c) }}{{ ', ' if not loop.last }}{% endfor %}
    from {{ next }} as n
    where {{ spark_cdc._cdc_parts_filter(cfg, touched_parts, 'n') }}
  {%- endcall -%}

  {#- 4. The plan (new directories, emptied partitions, replaced directories), committed in one
      metastore operation, then carried out. -#}
  {%- set plan = {'switch': [], 'drop': [], 'garbage': []} -%}
  {%- set dir_cols = spark_cdc._cdc_parts_text_cols(cfg, 's', [spark_cdc._cdc_parts_dir_sql('s')]) -%}
  {%- set staged = spark_cdc._cdc_parts_text_rows(dir_cols, stage ~ ' as s', width + 1) -%}
  {%- set existing = [] -%}
  {%- if touched_parts -%}
    {%- set existing = spark_cdc._cdc_parts_text_rows(dir_cols, parts ~ ' as s where ' ~ spark_cdc._cdc_parts_filter(cfg, touched_parts, 's'), width + 1) -%}
  {%- endif -%}
  {%- set existing_values = [] -%}
  {%- for r in existing -%}{%- do existing_values.append(r[:width]) -%}{%- endfor -%}
  {%- set staged_values = [] -%}
  {%- for r in staged -%}
    {%- do staged_values.append(r[:width]) -%}
    {%- do plan['switch'].append([spark_cdc._cdc_parts_spec(cfg, r[:width]), r[width], 'set' if r[:width] in existing_values else 'add']) -%}
  {%- endfor -%}
  {%- for r in existing -%}
    {%- if r[:width] in staged_values -%}
      {%- do plan['garbage'].append(r[width]) -%}
    {%- else -%}
      {%- do plan['drop'].append(spark_cdc._cdc_parts_spec(cfg, r[:width])) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set delta_sql -%}
    select {% for e in count_exprs -%}
      coalesce((select {{ e }} from {{ next }} where _cdc_key != {{ marker }}), 0)
      - coalesce((select {{ e }} from {{ touched }} where _cdc_key != {{ marker }}), 0){{ ',' if not loop.last }}
    {% endfor %}
  {%- endset -%}
  {%- set d = run_query(delta_sql) -%}
  {%- set delta = [] -%}
  {%- for i in range(count_exprs | length) -%}{%- do delta.append(d[0][i] | int) -%}{%- endfor -%}
  {% do adapter.drop_relation(next) %}
  {% do adapter.drop_relation(touched) %}
  {%- call statement('cdc_commit_stage') -%}
    alter table {{ stage }} set tblproperties ({{ spark_cdc._cdc_parts_plan_properties(plan) }})
  {%- endcall -%}
  {% do spark_cdc._cdc_parts_apply_plan(parts, plan, true) %}

  {{ return({'rewritten': touched_parts | length, 'delta': delta, 'plan': plan}) }}
{%- endmacro %}

{#- Step 6, after the view swap: replaced directories deleted, then the stage forgotten (the stage
    table is external, so dropping it keeps the directories the partitions now use). -#}
{% macro _cdc_parts_finish(target_relation, plan) -%}
  {%- set parts = spark_cdc._cdc_parts_relation(target_relation) -%}
  {% do spark_cdc._cdc_parts_collect_garbage(parts, plan) %}
  {% do adapter.drop_relation(spark_cdc._cdc_parts_relation(target_relation, 'stage')) %}
{%- endmacro %}
