{#- The data of the health report, as one JSON line in the log:
      dbt run-operation spark_cdc.report --args '{days: 14}'
    `python -m dbt_spark_cdc.report` runs it and turns the line into a self-contained HTML page
    (README, "Health report"). Per source table: the lag of its recent staging runs (cdc_lag),
    quarantined records by reason and day (cdc_quarantine), DSQL chunks still waiting for fragments;
    per CDC target: rows, versions, tombstones and watermark (its TBLPROPERTIES), and for SCD2
    targets the versions per commit day (valid-from) over the last `days` days that have versions
    (source time: a replay of old history still shows its shape). Relations that do not exist yet
    (a fresh project) are left out, not errors. Every value is cast to text in SQL: message content stays data all the way
    to the page, which escapes it. -#}
{% macro report(days=14, runs=30) -%}
  {{ return(adapter.dispatch('report', 'spark_cdc')(days, runs)) }}
{%- endmacro %}

{% macro default__report(days=14, runs=30) -%}
  {%- if not execute -%}{{ return('') }}{%- endif -%}
  {%- set days = days | int -%}
  {%- set runs = runs | int -%}
  {%- if days < 1 or runs < 1 -%}
    {{ exceptions.raise_compiler_error("spark_cdc: report: days and runs must be positive integers; got days=" ~ days ~ ", runs=" ~ runs ~ ". Fix: pass --args '{days: 14, runs: 30}' or leave them out.") }}
  {%- endif -%}
  {%- set data = {'days': days, 'runs': runs, 'project': project_name, 'target': target.name,
                  'generated_at': modules.datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M:%S UTC'),
                  'lag': [], 'quarantine': [], 'pending': [], 'targets': [], 'scd2_days': []} -%}
  {%- set since = 'current_timestamp() - make_dt_interval(' ~ days ~ ')' -%}

  {%- set lag = spark_cdc._report_relation('cdc_lag') -%}
  {%- if lag is not none -%}
    {%- do data['lag'].extend(spark_cdc._report_rows(
      "select source_table, cdc_format, cast(cdc_loaded_at as string), cast(changes as string),"
      ~ " cast(processing_lag_ms_p50 as string), cast(processing_lag_ms_max as string),"
      ~ " cast(landing_lag_ms_p50 as string), cast(landing_lag_ms_max as string),"
      ~ " cast(load_lag_ms_p50 as string), cast(load_lag_ms_max as string)"
      ~ " from (select *, row_number() over (partition by cdc_format, source_table order by cdc_loaded_at desc) as n from " ~ lag ~ ")"
      ~ " where n <= " ~ runs ~ " order by cdc_format, source_table, cdc_loaded_at",
      ['source_table', 'cdc_format', 'run', 'changes', 'processing_p50', 'processing_max',
       'landing_p50', 'landing_max', 'load_p50', 'load_max'])) -%}
  {%- endif -%}

  {%- set quarantine = spark_cdc._report_relation('cdc_quarantine') -%}
  {%- if quarantine is not none -%}
    {%- do data['quarantine'].extend(spark_cdc._report_rows(
      "select cast(to_date(cdc_loaded_at) as string), cdc_format, coalesce(source_table, ''), reason_code, cast(count(*) as string)"
      ~ " from " ~ quarantine ~ " where cdc_loaded_at >= " ~ since ~ " group by 1, 2, 3, 4 order by 1, 2, 3, 4",
      ['day', 'cdc_format', 'source_table', 'reason_code', 'records'])) -%}
  {%- endif -%}

  {%- set pending = spark_cdc._report_relation('stg_cdc__aurora_dsql_pending_chunks') -%}
  {%- if pending is not none -%}
    {%- do data['pending'].extend(spark_cdc._report_rows(
      "select coalesce(source_table, ''), cast(count(distinct chunk_id) as string),"
      ~ " cast(min(least(coalesce(main_record_at, first_fragment_at), coalesce(first_fragment_at, main_record_at))) as string),"
      ~ " cast(sum(fragments_received) as string)"
      ~ " from " ~ pending ~ " group by 1 order by 1",
      ['source_table', 'chunks', 'oldest_at', 'fragments'])) -%}
  {%- endif -%}

  {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.config.materialized in ('cdc_scd1', 'cdc_scd2') and node.config.enabled -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
    {%- if relation is not none -%}
      {%- set props = spark_cdc._cdc_tblproperties(relation) -%}
      {%- set kind = node.config.materialized[4:] -%}
      {%- do data['targets'].append({
            'name': node.name, 'relation': relation.render(), 'kind': kind,
            'source_table': node.config.get('source_table') or '',
            'rows': props.get('spark_cdc.current_rows', ''), 'versions': props.get('spark_cdc.versions', ''),
            'tombstones': props.get('spark_cdc.tombstones', ''),
            'last_batch_changes': props.get('spark_cdc.last_batch_changes', ''),
            'consumed_through': props.get('spark_cdc.consumed_through', '')}) -%}
      {%- if kind == 'scd2' -%}
        {%- set meta = spark_cdc._scd2_default_meta_column_names() -%}
        {%- do meta.update(node.config.get('meta_column_names') or {}) -%}
        {%- set valid_from = spark_cdc.quote_identifier(meta['valid_from']) -%}
        {%- set rows = spark_cdc._report_rows(
          "select cast(to_date(" ~ valid_from ~ ") as string), cast(count(*) as string) from " ~ relation
          ~ " where to_date(" ~ valid_from ~ ") > (select date_sub(max(to_date(" ~ valid_from ~ ")), " ~ days ~ ") from " ~ relation ~ ")"
          ~ " or " ~ valid_from ~ " is null group by 1 order by 1", ['day', 'versions']) -%}
        {%- for row in rows -%}
          {%- do row.update({'target': node.name}) -%}
        {%- endfor -%}
        {%- do data['scd2_days'].extend(rows) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}

  {{ log(spark_cdc._report_prefix() ~ tojson(data), info=true) }}
  {{ return('') }}
{%- endmacro %}

{#- The log line's prefix, which the report command looks for. -#}
{% macro _report_prefix() -%}
  {{- return('spark_cdc report data: ') -}}
{%- endmacro %}

{#- The rows of a query as dicts of the given keys, in column order (the data's JSON objects). -#}
{% macro _report_rows(sql, keys) -%}
  {%- set rows = [] -%}
  {%- for r in run_query(sql) -%}
    {%- set row = {} -%}
    {%- for key in keys -%}
      {%- do row.update({key: r[loop.index0]}) -%}
    {%- endfor -%}
    {%- do rows.append(row) -%}
  {%- endfor -%}
  {{ return(rows) }}
{%- endmacro %}

{#- The relation of one of the package's models, or none when it is disabled or not built yet. -#}
{% macro _report_relation(name) -%}
  {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.package_name == 'spark_cdc' and node.name == name and node.config.enabled -%}
    {{ return(adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias)) }}
  {%- endfor -%}
  {{ return(none) }}
{%- endmacro %}
