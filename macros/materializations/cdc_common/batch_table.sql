{#- A run with changes writes its batch once into the target's hidden work table
    `<model>__cdc_batch` (after the probe and any column inference, which may still stop the run
    before anything is written), and every later statement of the run (the reject checks, the state
    or history it writes) reads that table instead of the batch's SQL.

    Why: the batch's SQL reads the model's input (for a model over cdc_changes, the union of its
    format's staging tables, the key-change split and the sequence-conflict lookups) twice or
    more, and the state SQL reads the batch in several of its steps. Spark inlines each of those
    reads, so each statement analysed, optimized and scanned the input several times over: on the
    reference suite's tables a cdc_scd2 run spent 23 s in one CREATE TABLE AS whose own work, over
    the written batch, takes 3 s. The table also makes the run apply exactly the rows its checks saw.

    The table also records whether each change fails the target's checks (`_rejected`, rejects.sql):
    one pass parses each image for them, and the reject count is a scan of that column.

    The table is the package's file_format (parquet unless var('spark_cdc').file_format says
    otherwise), dropped at the end of the run; one left by a killed run is dropped by the next. -#}
{% macro _cdc_write_batch(target_relation, cfg, batch_sql) -%}
  {%- set relation = spark_cdc._cdc_batch_relation(target_relation) -%}
  {% do adapter.drop_relation(relation) %}
  {%- call statement('cdc_batch') -%}
create table {{ relation }} using {{ spark_cdc.get_config()['file_format'] }} as
{{ spark_cdc._cdc_batch_rows_sql(cfg, batch_sql) }}
  {%- endcall -%}
  {{ return('select * from ' ~ relation) }}
{%- endmacro %}

{#- The target's batch work table (hidden, `<model>__cdc_batch`). -#}
{% macro _cdc_batch_relation(target_relation) -%}
  {{ return(api.Relation.create(database=target_relation.database, schema=target_relation.schema,
                                identifier=target_relation.identifier ~ '__cdc_batch', type='table')) }}
{%- endmacro %}

