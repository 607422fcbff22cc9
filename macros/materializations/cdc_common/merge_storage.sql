{#- Storage of CDC targets whose file format supports MERGE INTO (delta, iceberg, hudi): one
    persistent physical table `<model>__cdc_state` with the same columns as a parquet version table
    (hidden bookkeeping included), behind the same target view. See strategy_merge.sql (both
    materializations). -#}

{% macro _cdc_merge_formats() -%}
  {{ return(['delta', 'iceberg', 'hudi']) }}
{%- endmacro %}

{#- The persistent state table <target>__cdc_state of a MERGE-storage (delta, iceberg, hudi) target. -#}
{% macro _cdc_state_relation(target_relation) -%}
  {{ return(api.Relation.create(database=target_relation.database, schema=target_relation.schema,
                                identifier=target_relation.identifier ~ '__cdc_state', type='table')) }}
{%- endmacro %}

{#- The physical table that holds a built target's current state, by storage layout: the MERGE
    state table, the partitioned parts table, or the current version table. -#}
{% macro _cdc_physical_relation(target_relation, state, cfg) -%}
  {%- if cfg['file_format'] in spark_cdc._cdc_merge_formats() -%}
    {{ return(spark_cdc._cdc_state_relation(target_relation)) }}
  {%- elif spark_cdc._cdc_uses_partitions(cfg) -%}
    {{ return(spark_cdc._cdc_parts_relation(target_relation)) }}
  {%- endif -%}
  {{ return(spark_cdc._cdc_version_relation(target_relation, state['version'])) }}
{%- endmacro %}

{#- A target built with one storage (versioned tables, the MERGE state table, or the partitioned
    parts table of partitioned parquet/orc) cannot be continued with another: the next run would read
    a physical table that does not exist. -#}
{% macro _cdc_check_storage(target_relation, state, cfg, materialization) -%}
  {%- if state['version'] is none or cfg['full_refresh'] -%}{{ return(none) }}{%- endif -%}
  {%- set merge = cfg['file_format'] in spark_cdc._cdc_merge_formats() -%}
  {%- set parts = spark_cdc._cdc_uses_partitions(cfg) -%}
  {%- set physical = spark_cdc._cdc_physical_relation(target_relation, state, cfg) -%}
  {%- if adapter.get_relation(database=physical.database, schema=physical.schema, identifier=physical.identifier) is none -%}
    {%- set layout = 'a MERGE state table' if merge else 'a partitioned parts table (file_format parquet/orc with partition_by)' if parts else 'versioned tables (file_format parquet/orc without partition_by)' -%}
    {% set msg %}
spark_cdc: model '{{ model['name'] }}' ({{ materialization }}) sets file_format='{{ cfg['file_format'] }}' and partition_by={{ cfg['partition_by'] }}, which store the target in {{ layout }}, but {{ target_relation }} was built with another storage layout ({{ physical }} does not exist).
Fix: run once with --full-refresh after changing file_format or partition_by (switching between parquet/orc and delta/iceberg/hudi, or adding/removing partition_by on parquet/orc, rebuilds the target), or restore the previous setting.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
{%- endmacro %}

{#- Create (or, on a full refresh, replace) the state table from `select_sql`. Delta and Iceberg
    replace atomically; other formats are dropped first (a crash in between leaves the target view
    without its table until the next --full-refresh, which the view's watermark then requires). -#}
{% macro _cdc_create_state_table(state_relation, cfg, select_sql) -%}
  {%- if cfg['file_format'] not in ('delta', 'iceberg') -%}
    {% do adapter.drop_relation(state_relation) %}
  {%- endif -%}
  {%- call statement('main') -%}
    {{ spark_cdc.cdc_state_table_sql(state_relation, cfg['file_format'], cfg['partition_by'], select_sql, cfg['tblproperties']) }}
  {%- endcall -%}
{%- endmacro %}

{#- Columns declared after the state table was created are added (null for existing rows, as the
    parquet path reads them), and so are hidden columns a newer version of the package keeps (a
    table written before SCD1 kept per-column orders has no _cdc_col_ords: its rows read as written
    wholly by their last change); the state SQL then reads and writes them like the others. -#}
{% macro _cdc_add_missing_columns(state_relation, cfg) -%}
  {%- set existing = [] -%}
  {%- for col in adapter.get_columns_in_relation(state_relation) -%}{%- do existing.append(col.name | lower) -%}{%- endfor -%}
  {%- set missing = [] -%}
  {%- for c in cfg['columns'] + spark_cdc._cdc_hidden_state_columns(cfg['materialization'])
        if c.name | lower not in existing -%}{%- do missing.append(c) -%}{%- endfor -%}
  {%- if missing -%}
    {%- call statement('cdc_add_columns') -%}
      alter table {{ state_relation }} add columns ({% for c in missing %}{{ spark_cdc.quote_identifier(c.name) }} {{ c.data_type }}{{ ', ' if not loop.last }}{% endfor %})
    {%- endcall -%}
  {%- endif -%}
{%- endmacro %}

{#- A temporary view of the state rows the batch can change: its keys, the truncate marker, and
    every row when the batch carries a truncate (a truncate touches every key). The state macros
    read it as their `old`, so they compute the next state of exactly those rows. -#}
{% macro _cdc_touched_state_view(target_relation, state_relation, batch_sql, partition_filter=none) -%}
  {%- set name = target_relation.identifier ~ '__cdc_touched' -%}
  {%- call statement('cdc_touched') -%}
    create or replace temporary view {{ spark_cdc.quote_identifier(name) }} as
    {{ spark_cdc._cdc_touched_state_sql(batch_sql, state_relation, partition_filter) }}
  {%- endcall -%}
  {{ return(api.Relation.create(identifier=name, type='view')) }}
{%- endmacro %}

{#- `partition_filter`: a predicate on `s` naming the partitions that hold those rows (partitioned
    storage finds them first with a scan of the key column alone), so the scan of whole rows reads
    only them. -#}
{% macro _cdc_touched_state_sql(batch_sql, state_relation, partition_filter=none) -%}
select s.*
from {{ state_relation }} as s
where (s._cdc_key = {{ spark_cdc._sql_string(spark_cdc._truncate_marker_key()) }}
   or s._cdc_key in (select b._k from ({{ batch_sql }}) as b where b._op != 'truncate')
   or exists (select 1 from ({{ batch_sql }}) as b where b._op = 'truncate'))
  {%- if partition_filter is not none %}
  and ({{ partition_filter }})
  {%- endif %}
{%- endmacro %}

{#- The other storage's physical tables, left by a --full-refresh that switched file_format. -#}
{% macro _cdc_drop_state_table(target_relation) -%}
  {% do adapter.drop_relation(spark_cdc._cdc_state_relation(target_relation)) %}
{%- endmacro %}

{#- Hidden state columns that are not part of every layout version: added to persistent state
    tables (MERGE, partitioned) that lack them. -#}
{% macro _cdc_hidden_state_columns(materialization) -%}
  {%- if materialization == 'cdc_scd1' -%}
    {{ return([{'name': '_cdc_col_ords', 'data_type': 'map<string, ' ~ spark_cdc._cdc_order_type() ~ '>'}]) }}
  {%- endif -%}
  {{ return([]) }}
{%- endmacro %}

{#- The TBLPROPERTIES clause setting `props` ({name: value}: a target's `tblproperties` config), or
    nothing. -#}
{% macro _cdc_tblproperties_clause(props) -%}
  {%- if props -%}
    tblproperties ({% for k, v in props.items() %}{{ spark_cdc._sql_string(k) }} = {{ spark_cdc._sql_string(v) }}{{ ', ' if not loop.last }}{% endfor %})
  {%- endif -%}
{%- endmacro %}

{#- A persistent physical table (MERGE state, partitioned table) created before its `tblproperties`
    config was set or changed gets the configured values; nothing runs when they are already set, or
    when the model sets none (properties removed from the config stay on the table). -#}
{% macro _cdc_apply_tblproperties(relation, cfg) -%}
  {%- if not cfg['tblproperties'] -%}{{ return(none) }}{%- endif -%}
  {%- set current = spark_cdc._cdc_tblproperties(relation) -%}
  {%- set differ = [] -%}
  {%- for k, v in cfg['tblproperties'].items() if current.get(k) != v -%}{%- do differ.append(k) -%}{%- endfor -%}
  {%- if differ -%}
    {%- call statement('cdc_tblproperties') -%}
      alter table {{ relation }} set {{ spark_cdc._cdc_tblproperties_clause(cfg['tblproperties']) }}
    {%- endcall -%}
  {%- endif -%}
{%- endmacro %}
