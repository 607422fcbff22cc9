{#- One compact table in the log at the end of every `dbt run` / `dbt build` (the package's
    on-run-end hook): per CDC target that applied changes in this invocation, the changes of its
    batch and the rows it ends with, and per source table what staging found in this invocation:
    records quarantined by reason, DSQL chunked records still waiting for fragments, and the
    commit-to-processing lag (p50 / max). Quiet when nothing changed: a target whose batch was
    empty gets no line unless its source table has quarantined or pending records. Reads only
    small tables: the targets' TBLPROPERTIES, this run's quarantine rows and cdc_lag rows. -#}
{% macro run_summary(results) -%}
  {{ return(adapter.dispatch('run_summary', 'spark_cdc')(results)) }}
{%- endmacro %}

{% macro default__run_summary(results) -%}
  {%- if not execute or flags.WHICH not in ('run', 'build') -%}{{ return('') }}{%- endif -%}
  {%- set since = 'timestamp_micros(' ~ ((run_started_at.timestamp() * 1000000) | int) ~ ')' -%}
  {%- set targets = [] -%}
  {%- set built = {} -%}
  {%- for r in results if r.node.resource_type == 'model' and r.status == 'success' -%}
    {%- if r.node.config.materialized in ('cdc_scd1', 'cdc_scd2') -%}
      {%- do targets.append(r.node) -%}
    {%- elif r.node.package_name == 'spark_cdc' -%}
      {%- do built.update({r.node.name: r.node.relation_name}) -%}
    {%- endif -%}
  {%- endfor -%}

  {#- source table -> {'quarantined': {reason: n}, 'pending': n, 'lag': (p50, max)}, from one query over
      what this invocation built of cdc_quarantine (part 0), the DSQL pending chunks (1) and
      cdc_lag (2). -#}
  {%- set sources = {} -%}
  {%- set parts = [] -%}
  {%- if 'cdc_quarantine' in built -%}
    {%- do parts.append("select 0 as part, coalesce(source_table, 'unknown table') as source_table, reason_code, count(*) as n, cast(null as double) as p50, cast(null as double) as mx from " ~ built['cdc_quarantine'] ~ " where cdc_loaded_at >= " ~ since ~ " group by 2, 3") -%}
  {%- endif -%}
  {%- if 'stg_cdc__aurora_dsql_pending_chunks' in built -%}
    {%- do parts.append("select 1, coalesce(source_table, 'unknown table'), cast(null as string), count(*), cast(null as double), cast(null as double) from " ~ built['stg_cdc__aurora_dsql_pending_chunks'] ~ " group by 2") -%}
  {%- endif -%}
  {%- if 'cdc_lag' in built -%}
    {%- do parts.append("select 2, source_table, cast(null as string), cast(null as bigint), percentile(processing_lag_ms_p50, 0.5), cast(max(processing_lag_ms_max) as double) from " ~ built['cdc_lag'] ~ " where cdc_loaded_at >= " ~ since ~ " and processing_lag_ms_max is not null group by 2") -%}
  {%- endif -%}
  {%- if parts -%}
    {%- for row in run_query(parts | join(' union all ') ~ ' order by 1, 2, 3') -%}
      {%- set found = sources.setdefault(row[1], {}) -%}
      {%- if row[0] == 0 -%}
        {%- do found.setdefault('quarantined', {}).update({row[2]: row[3]}) -%}
      {%- elif row[0] == 1 -%}
        {%- do found.update({'pending': row[3]}) -%}
      {%- else -%}
        {%- do found.update({'lag': (row[4], row[5])}) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}

  {#- (name, kind, changes, rows, found): a target written in this invocation, unless its batch was
      empty and its source table has nothing quarantined or pending (a first build of an idle
      source is not news). -#}
  {%- set entries = [] -%}
  {%- set shown = [] -%}
  {%- for node in targets -%}
    {%- set props = spark_cdc._cdc_tblproperties(node.relation_name) -%}
    {%- set source_table = node.config.get('source_table') or '' -%}
    {%- set found = sources.get(source_table, {}) -%}
    {%- set changes = props.get('spark_cdc.last_batch_changes', '0') -%}
    {%- if props.get('spark_cdc.last_invocation_id') == invocation_id
          and (changes not in ('0', '') or found.get('quarantined') or found.get('pending')) -%}
      {%- do shown.append(source_table) -%}
      {%- set rows = props.get('spark_cdc.current_rows') if node.config.materialized == 'cdc_scd1' else props.get('spark_cdc.versions') -%}
      {%- do entries.append((node.name, node.config.materialized[4:], changes, rows, found)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for source_table, found in sources.items() if source_table not in shown and (found.get('quarantined') or found.get('pending')) -%}
    {%- do entries.append(('(' ~ source_table ~ ')', '-', '-', '-', found)) -%}
  {%- endfor -%}
  {%- if entries -%}
    {%- set width = ([28] + entries | map('first') | map('length') | list) | max -%}
    {{ log('spark_cdc run summary (rows: current rows of scd1, versions of scd2; quarantined and lag: this run)', info=true) }}
    {{ log(spark_cdc._run_summary_columns('target', 'kind', 'changes', 'rows', 'quarantined', 'pending', 'lag p50 / max', width), info=true) }}
    {%- for e in entries %}
    {{ log(spark_cdc._run_summary_line(e[0], e[1], e[2], e[3], e[4], width), info=true) }}
    {%- endfor %}
  {%- endif -%}
  {{ return('') }}
{%- endmacro %}

{#- One line of the run summary: name, kind, changes, rows, then the source table's quarantined records
    by reason, pending chunks and lag (p50 / max), '-' where there is nothing. -#}
{% macro _run_summary_line(name, kind, changes, rows, found, width=28) -%}
  {%- set quarantined = [] -%}
  {%- for reason, n in (found.get('quarantined') or {}).items() -%}
    {%- do quarantined.append(reason ~ '=' ~ n) -%}
  {%- endfor -%}
  {%- set lag = found.get('lag') -%}
  {%- set lag_text = spark_cdc._run_summary_ms(lag[0]) ~ ' / ' ~ spark_cdc._run_summary_ms(lag[1]) if lag else '-' -%}
  {{ return(spark_cdc._run_summary_columns(name, kind, changes, rows, quarantined | join(', ') or '-', found.get('pending', '-'), lag_text, width)) }}
{%- endmacro %}

{#- The run summary's fixed-width columns. -#}
{% macro _run_summary_columns(name, kind, changes, rows, quarantined, pending, lag, width=28) -%}
  {{ return('  ' ~ (name | string).ljust(width) ~ ' ' ~ (kind | string).ljust(5) ~ (changes | string).rjust(9) ~ (rows | string).rjust(10) ~ '  ' ~ (quarantined | string).ljust(30) ~ (pending | string).rjust(8) ~ '  ' ~ lag) }}
{%- endmacro %}

{#- A lag in milliseconds for people: ms, s, min, h or d with one decimal. -#}
{% macro _run_summary_ms(ms) -%}
  {%- set ms = ms | float -%}
  {%- if ms < 1000 -%}{{ return((ms | int) ~ ' ms') }}
  {%- elif ms < 60000 -%}{{ return('%.1f s' | format(ms / 1000)) }}
  {%- elif ms < 3600000 -%}{{ return('%.1f min' | format(ms / 60000)) }}
  {%- elif ms < 172800000 -%}{{ return('%.1f h' | format(ms / 3600000)) }}
  {%- else -%}{{ return('%.1f d' | format(ms / 86400000)) }}
  {%- endif -%}
{%- endmacro %}
