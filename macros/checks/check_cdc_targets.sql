{#- The package's on-run-start hook: before anything of a `dbt run` / `dbt build` runs, the declared
    data_type of every selected CDC target's columns is checked to be a Spark type, so a mistake
    that would otherwise fail deep inside Spark (a YAML flow mapping cutting `decimal(28,6)` at its
    comma) fails the invocation at once, naming the model, the column and the fix. Every other
    setting is checked when its model runs, so a misconfigured model fails alone.
    It renders one statement: `set spark.sql.variable.substitute=false`, so Spark substitutes no
    `${...}` in the invocation's statements: message content (column names from images, values
    read back from tables) cannot become SQL or an environment variable's value. A project that
    uses Spark variables in its own SQL can turn it back on in its own hook. -#}
{#- The target's rejected-changes table exists before anything runs (see _cdc_screen_batch), so
    that cdc_quarantine, built earlier in the run than the target, lists it. -#}
{% macro _cdc_ensure_rejected_table(node) -%}
  {%- set identifier = (node.alias or node.name) ~ '__cdc_rejected' -%}
  {%- if adapter.get_relation(database=node.database, schema=node.schema, identifier=identifier) is none -%}
    {%- do adapter.create_schema(api.Relation.create(database=node.database, schema=node.schema)) -%}
    {%- set relation = api.Relation.create(database=node.database, schema=node.schema, identifier=identifier, type='table') -%}
    {%- do spark_cdc._cdc_create_rejected_table(relation) -%}
    {#- dbt's relation cache, which later lookups of this run read, learns of it. -#}
    {%- do adapter.cache_added(relation) -%}
  {%- endif -%}
{%- endmacro %}

{% macro check_cdc_targets() -%}
  {{ return(adapter.dispatch('check_cdc_targets', 'spark_cdc')()) }}
{%- endmacro %}

{% macro default__check_cdc_targets() -%}
  {%- set statement = 'set spark.sql.variable.substitute=false' -%}
  {%- if not execute or flags.WHICH not in ('run', 'build') -%}{{ return(statement) }}{%- endif -%}
  {%- for node in graph.nodes.values()
        if node.resource_type == 'model'
        and node.config.materialized in ('cdc_scd1', 'cdc_scd2')
        and node.unique_id in selected_resources -%}
    {%- for name, col in node.columns.items() -%}
      {%- do spark_cdc._cdc_check_data_type(node.name, col.get('name', name), col.get('data_type')) -%}
    {%- endfor -%}
    {%- do spark_cdc._cdc_ensure_rejected_table(node) -%}
  {%- endfor -%}
  {{ return(statement) }}
{%- endmacro %}
