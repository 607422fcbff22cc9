{#- The raw landing relation of a format: `source: [source_name, table_name]` (keeps lineage in the
    DAG), `ref: name` or `ref: [package, name]` (a seed or model of the project lands the messages:
    `dbt build` builds it before staging), or `relation: "schema.table"` (a table landed outside dbt). -#}
{% macro raw_relation(format) -%}
  {{ return(adapter.dispatch('raw_relation', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__raw_relation(format) -%}
  {%- set cfg = spark_cdc.format_config(format) -%}
  {%- if cfg.get('source') -%}
    {%- set parts = cfg['source'] -%}
    {%- if parts is string or parts | length != 2 -%}
      {{ exceptions.raise_compiler_error("spark_cdc: formats." ~ format ~ ".source must be [source_name, table_name]; got " ~ parts ~ ". Fix: give the dbt source's name and table, e.g. source: [kafka_landing, " ~ format ~ "], under vars: spark_cdc: in dbt_project.yml.") }}
    {%- endif -%}
    {{ return(source(parts[0], parts[1])) }}
  {%- elif cfg.get('ref') -%}
    {%- set parts = cfg['ref'] -%}
    {%- if parts is string -%}
      {#- The root project's node: an unqualified ref from a package node would look in the
          package first (dbt's require_ref_prefers_node_package_to_root). -#}
      {{ return(ref(project_name, parts)) }}
    {%- elif parts is iterable and parts is not mapping and parts | length == 2 -%}
      {{ return(ref(parts[0], parts[1])) }}
    {%- endif -%}
    {{ exceptions.raise_compiler_error("spark_cdc: formats." ~ format ~ ".ref must be a model or seed name, or [package, name]; got " ~ parts ~ ". Fix: e.g. ref: raw_" ~ format ~ " under vars: spark_cdc: in dbt_project.yml.") }}
  {%- elif cfg.get('relation') -%}
    {%- set parts = cfg['relation'].split('.') -%}
    {%- if parts | length == 2 -%}
      {{ return(api.Relation.create(schema=parts[0], identifier=parts[1])) }}
    {%- elif parts | length == 1 -%}
      {{ return(api.Relation.create(schema=target.schema, identifier=parts[0])) }}
    {%- endif -%}
    {{ exceptions.raise_compiler_error("spark_cdc: formats." ~ format ~ ".relation must be 'schema.table'; got '" ~ cfg['relation'] ~ "'. Fix: name the landing table as schema.table (or table, in the target schema) under vars: spark_cdc: in dbt_project.yml.") }}
  {%- elif not spark_cdc.format_enabled(format) -%}
    {#- A disabled format needs no landing table: its models are disabled, yet dbt still renders
        them when it parses the project. This name is never queried. -#}
    {{ return(api.Relation.create(schema=target.schema, identifier='spark_cdc__' ~ format ~ '__disabled')) }}
  {%- else -%}
    {% set msg %}
spark_cdc: format '{{ format }}' is enabled but has no raw relation.
Fix: set var('spark_cdc').formats.{{ format }}.source: [source_name, table_name], .ref: <seed or model> or .relation: 'schema.table' in dbt_project.yml, or enabled: false.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
{%- endmacro %}
