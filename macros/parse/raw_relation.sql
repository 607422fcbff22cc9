{#- The raw landing relation of a format: `source: [source_name, table_name]` (keeps lineage in the
    DAG) or `relation: "schema.table"` (a table landed outside dbt). -#}
{% macro raw_relation(format) -%}
  {{ return(adapter.dispatch('raw_relation', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__raw_relation(format) -%}
  {%- set cfg = spark_cdc.format_config(format) -%}
  {%- if cfg.get('source') -%}
    {%- set parts = cfg['source'] -%}
    {%- if parts is string or parts | length != 2 -%}
      {{ exceptions.raise_compiler_error("spark_cdc: formats." ~ format ~ ".source must be [source_name, table_name]; got " ~ parts ~ ". Fix var('spark_cdc') in dbt_project.yml.") }}
    {%- endif -%}
    {{ return(source(parts[0], parts[1])) }}
  {%- elif cfg.get('relation') -%}
    {%- set parts = cfg['relation'].split('.') -%}
    {%- if parts | length == 2 -%}
      {{ return(api.Relation.create(schema=parts[0], identifier=parts[1])) }}
    {%- elif parts | length == 1 -%}
      {{ return(api.Relation.create(schema=target.schema, identifier=parts[0])) }}
    {%- endif -%}
    {{ exceptions.raise_compiler_error("spark_cdc: formats." ~ format ~ ".relation must be 'schema.table'; got '" ~ cfg['relation'] ~ "'.") }}
  {%- elif not spark_cdc.format_enabled(format) -%}
    {#- A disabled format needs no landing table: its models are disabled, yet dbt still renders
        them when it parses the project. This name is never queried. -#}
    {{ return(api.Relation.create(schema=target.schema, identifier='spark_cdc__' ~ format ~ '__disabled')) }}
  {%- else -%}
    {% set msg %}
spark_cdc: format '{{ format }}' is enabled but has no raw relation.
Set var('spark_cdc').formats.{{ format }}.source: [source_name, table_name] or .relation: 'schema.table' in dbt_project.yml.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
{%- endmacro %}
