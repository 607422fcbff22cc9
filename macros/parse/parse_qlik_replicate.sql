{#- Qlik Replicate (Kafka target, JSON) metadata and data messages -> canonical change rows plus
    quarantined and skipped records. Takes the name of a CTE shaped like spark_cdc.raw_messages();
    see parse_debezium for the output columns. `known_metadata_relation` is a relation shaped like
    stg_cdc__qlik_replicate whose skipped `metadata` rows describe table versions staged earlier
    (default: the calling staging model itself, when it runs incrementally). -#}
{% macro parse_qlik_replicate(raw_cte, known_metadata_relation=none) -%}
  {{ return(adapter.dispatch('parse_qlik_replicate', 'spark_cdc')(raw_cte, known_metadata_relation)) }}
{%- endmacro %}

{% macro default__parse_qlik_replicate(raw_cte, known_metadata_relation=none) -%}
  {%- set md_relation = known_metadata_relation -%}
  {%- if md_relation is none and is_incremental() -%}{%- set md_relation = this -%}{%- endif -%}
  qlik_parsed as (
    {{ spark_cdc._qlik_parsed(raw_cte) }}
  ),

  qlik_envelope as (
    {{ spark_cdc._qlik_envelope('qlik_parsed') }}
  ),

  qlik_typed as (
    {{ spark_cdc._qlik_typed('qlik_envelope') }}
  ),

  qlik_fields as (
    {{ spark_cdc._qlik_fields('qlik_typed') }}
  ),

  qlik_images as (
    {{ spark_cdc._qlik_images('qlik_fields') }}
  ),

  {{ spark_cdc._qlik_known_versions('qlik_fields', md_relation) }},

  {#- One row per source table: broadcast, so the messages are not shuffled by table (all of them
      to one task when one table dominates). #}
  qlik_matched as (
    {{ spark_cdc._qlik_matched('qlik_images', 'qlik_versions_by_table') }}
  ),

  qlik_keyed as (
    {{ spark_cdc._qlik_keyed('qlik_matched') }}
  ),

  qlik_classified as (
    {{ spark_cdc._qlik_classified('qlik_keyed') }}
  ),

  qlik_changes as (
    {{ spark_cdc._qlik_changes('qlik_classified') }}
  )

  {{ spark_cdc._qlik_staged_row('qlik_changes') }}
{%- endmacro %}

{#- Schema of the normalised metadata a skipped `metadata` row carries in `after` (the table-version
    registry reads it too). -#}
{% macro qlik_replicate_metadata_schema() -%}
  {{ return(adapter.dispatch('qlik_replicate_metadata_schema', 'spark_cdc')()) }}
{%- endmacro %}

{% macro default__qlik_replicate_metadata_schema() -%}
  {{ return('struct<table_version: bigint, schema_id: string, server: string, task: string, timestamp: string, columns: array<struct<ordinal: int, name: string, type: string, length: bigint, precision: int, scale: int, primary_key_position: int, nullable: boolean>>, data_schema: string>') }}
{%- endmacro %}
