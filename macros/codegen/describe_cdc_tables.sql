{#- What the staged change stream knows of each source table, for generating its targets: a list of
    {cdc_format, source_table, primary_key, key_source, columns: [{name, data_type, source_type}],
    changes}, sorted by format and table. Columns are the image members the changes carry, typed by
    the envelope's type hints where the format has them (Debezium and CockroachDB schemas, Qlik
    metadata, YDB column types, tables.<t>.column_types), else by their JSON values. The primary
    key is the table's configured primary_key, else the field names of its changes' keys. Reads
    cdc_changes (build the staging models first); `formats` narrows it. Only configuration literals
    reach the SQL; table and column names come back as data. -#}
{% macro describe_cdc_tables(formats=none) -%}
  {{ return(adapter.dispatch('describe_cdc_tables', 'spark_cdc')(formats)) }}
{%- endmacro %}

{% macro default__describe_cdc_tables(formats=none) -%}
  {%- set changes = spark_cdc._codegen_relation('cdc_changes') -%}
  {%- set wanted = formats if formats else spark_cdc.enabled_formats() -%}
  {%- set wanted = [wanted] if wanted is string else wanted -%}
  {%- set format_filter -%}
    cdc_format in ({% for f in wanted %}{{ spark_cdc._sql_string(f) }}{{ ', ' if not loop.last }}{% endfor %})
  {%- endset -%}
  {%- set columns_sql -%}
select c.cdc_format, c.source_table, e.name, {{ spark_cdc._cdc_value_type_agg('e.value') }} as value_type,
       max(try_element_at(c._hints, e.name)) as hint
from (
  select cdc_format, source_table,
         {{ spark_cdc._cdc_with_configured_hints('type_hints', 'source_table') }} as _hints,
         {{ spark_cdc._cdc_image_members("case when op = 'delete' then before else after end") }} as _m
  from {{ changes }}
  where {{ format_filter }} and op != 'truncate'
) as c
lateral view explode(c._m) e as name, value
group by c.cdc_format, c.source_table, e.name
order by c.cdc_format, c.source_table, e.name
  {%- endset -%}
  {%- set keys_sql -%}
select cdc_format, source_table, key_fields, count(*) as n
from (
  select cdc_format, source_table, array_sort(map_keys(from_json(key, 'map<string, string>'))) as key_fields
  from {{ changes }}
  where {{ format_filter }} and key is not null
) as k
group by cdc_format, source_table, key_fields
order by cdc_format, source_table, n desc
  {%- endset -%}
  {%- set tables = {} -%}
  {%- for row in run_query(keys_sql) -%}
    {%- set id = (row[0], row[1]) -%}
    {%- if id not in tables -%}
      {%- set configured = spark_cdc.table_config(row[1]).get('primary_key') if row[1] else none -%}
      {%- set configured = [configured] if configured is string else configured -%}
      {%- do tables.update({id: {
            'cdc_format': row[0], 'source_table': row[1], 'columns': [], 'changes': 0,
            'primary_key': (configured | list) if configured else (row[2] | list),
            'key_source': 'configuration' if configured else 'change keys'}}) -%}
    {%- endif -%}
    {%- do tables[id].update({'changes': tables[id]['changes'] + (row[3] | int)}) -%}
  {%- endfor -%}
  {%- for row in run_query(columns_sql) if (row[0], row[1]) in tables -%}
    {%- set hint = fromjson(row[4]) if row[4] else {} -%}
    {%- do tables[(row[0], row[1])]['columns'].append({
          'name': row[2],
          'data_type': spark_cdc._inferred_type(row[3], row[4], row[0]),
          'source_type': (hint.get('name') or hint.get('type')) if hint is mapping else none}) -%}
  {%- endfor -%}
  {%- set result = [] -%}
  {%- for id in tables.keys() | sort -%}{%- do result.append(tables[id]) -%}{%- endfor -%}
  {{ return(result) }}
{%- endmacro %}

{#- The relation of one of the package's models (the generator runs as an operation, where ref()
    of a package model is not at hand). -#}
{% macro _codegen_relation(name) -%}
  {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.package_name == 'spark_cdc' and node.name == name -%}
    {{ return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) }}
  {%- endfor -%}
  {{ exceptions.raise_compiler_error("spark_cdc: model '" ~ name ~ "' is not in this project. Fix: enable a format under vars: spark_cdc: formats, then run dbt build --select spark_cdc to stage its changes before generating models.") }}
{%- endmacro %}
