{#- The raw landing relations of a format, in configuration order: `source: [source_name,
    table_name]` (keeps lineage in the DAG) or a list of such pairs, `ref: name` or `ref: [package,
    name]` (a seed or model of the project lands the messages: `dbt build` builds it before staging),
    or `relation: "schema.table"` (a table landed outside dbt) or a list of such names. Many Kafka
    sinks write one table per topic: each relation keeps its own watermarks, and every record's
    lineage names its relation. -#}
{% macro raw_relations(format) -%}
  {{ return(adapter.dispatch('raw_relations', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__raw_relations(format) -%}
  {%- set cfg = spark_cdc.format_config(format) -%}
  {%- set where = "spark_cdc: formats." ~ format -%}
  {%- if cfg.get('source') -%}
    {%- set given = cfg['source'] -%}
    {%- set pairs = given if (given is not string and given | length > 0 and given[0] is not string) else [given] -%}
    {%- set found = [] -%}
    {%- for parts in pairs -%}
      {%- if parts is string or parts is mapping or parts | length != 2 -%}
        {{ exceptions.raise_compiler_error(where ~ ".source must be [source_name, table_name] or a list of them; got " ~ given ~ ". Fix: give the dbt source's name and table, e.g. source: [kafka_landing, " ~ format ~ "] (or [[kafka_landing, orders], [kafka_landing, customers]]), under vars: spark_cdc: in dbt_project.yml.") }}
      {%- endif -%}
      {%- do found.append(source(parts[0], parts[1])) -%}
    {%- endfor -%}
    {{ return(found) }}
  {%- elif cfg.get('ref') -%}
    {%- set parts = cfg['ref'] -%}
    {%- if parts is string -%}
      {#- The root project's node: an unqualified ref from a package node would look in the
          package first (dbt's require_ref_prefers_node_package_to_root). -#}
      {{ return([ref(project_name, parts)]) }}
    {%- elif parts is iterable and parts is not mapping and parts | length == 2 and parts[0] is string -%}
      {{ return([ref(parts[0], parts[1])]) }}
    {%- endif -%}
    {{ exceptions.raise_compiler_error(where ~ ".ref must be a model or seed name, or [package, name]; got " ~ parts ~ ". Fix: e.g. ref: raw_" ~ format ~ " under vars: spark_cdc: in dbt_project.yml (for several landing tables, use source: or relation: lists).") }}
  {%- elif cfg.get('relation') -%}
    {%- set given = cfg['relation'] -%}
    {%- set found = [] -%}
    {%- for name in ([given] if given is string else given) -%}
      {%- set parts = name.split('.') if name is string else [] -%}
      {%- if parts | length == 2 and parts[0] and parts[1] -%}
        {%- do found.append(api.Relation.create(schema=parts[0], identifier=parts[1])) -%}
      {%- elif parts | length == 1 and parts[0] -%}
        {%- do found.append(api.Relation.create(schema=target.schema, identifier=parts[0])) -%}
      {%- else -%}
        {{ exceptions.raise_compiler_error(where ~ ".relation must be 'schema.table' or a list of them; got '" ~ given ~ "'. Fix: name the landing table as schema.table (or table, in the target schema) under vars: spark_cdc: in dbt_project.yml.") }}
      {%- endif -%}
    {%- endfor -%}
    {{ return(found) }}
  {%- elif not spark_cdc.format_enabled(format) -%}
    {#- A disabled format needs no landing table: its models are disabled, yet dbt still renders
        them when it parses the project. This name is never queried. -#}
    {{ return([api.Relation.create(schema=target.schema, identifier='spark_cdc__' ~ format ~ '__disabled')]) }}
  {%- else -%}
    {% set msg %}
spark_cdc: format '{{ format }}' is enabled but has no raw relation.
Fix: set var('spark_cdc').formats.{{ format }}.source: [source_name, table_name], .ref: <seed or model> or .relation: 'schema.table' in dbt_project.yml, or enabled: false.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
{%- endmacro %}

{#- The first raw landing relation of a format (raw_relations lists them all). -#}
{% macro raw_relation(format) -%}
  {{ return(adapter.dispatch('raw_relation', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__raw_relation(format) -%}
  {{ return(spark_cdc.raw_relations(format)[0]) }}
{%- endmacro %}

{#- A format's landing position: the columns that place a record in its raw relation, the last of
    which orders the records of one group of the others (a Kafka sink: [topic, partition, offset]).
    Returns {'group': [names], 'order': name}. `position_columns` when given; else `partition_column`
    (optional) and `order_column`. Errors name the setting and the fix. -#}
{% macro _raw_position(format, cfg) -%}
  {%- set where = "spark_cdc: formats." ~ format -%}
  {%- set given = cfg.get('position_columns') -%}
  {%- if given is none -%}
    {{ return({'group': [cfg['partition_column']] if cfg.get('partition_column') else [], 'order': cfg['order_column']}) }}
  {%- endif -%}
  {%- if given is string or given is mapping or given | length == 0 or given | reject('string') | list -%}
    {{ exceptions.raise_compiler_error(where ~ ".position_columns must be a list of column names, the last one the order within the others (e.g. [topic, partition, offset]); got " ~ given ~ ". Fix: correct it under vars: spark_cdc: in dbt_project.yml.") }}
  {%- endif -%}
  {%- if cfg.get('partition_column') or cfg.get('order_column') != 'offset' -%}
    {{ exceptions.raise_compiler_error(where ~ " sets position_columns " ~ given ~ " together with partition_column/order_column. Fix: keep position_columns alone (its last column orders the records of each group of the others), or remove it to use partition_column and order_column.") }}
  {%- endif -%}
  {%- if given | map('lower') | unique | list | length != given | length -%}
    {{ exceptions.raise_compiler_error(where ~ ".position_columns lists a column twice (" ~ given ~ "). Fix: list each column once.") }}
  {%- endif -%}
  {{ return({'group': given[:-1], 'order': given[-1]}) }}
{%- endmacro %}
