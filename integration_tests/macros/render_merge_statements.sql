{#- dbt run-operation render_merge_statements: writes the statements the MERGE strategies of
    cdc_scd1 and cdc_scd2 generate for a small target, and the count of its rejected changes over
    the rows its batch table is written from (table <schema>.merge_statements: name, sql), so
    tests/integration/test_debezium_merge.py can hand each to Spark's SQL parser. -#}
{% macro render_merge_statements() -%}
  {%- set columns = [{'name': 'id', 'data_type': 'int'}, {'name': 'name', 'data_type': 'string'}, {'name': 'weight', 'data_type': 'double'}] -%}
  {%- set view = api.Relation.create(schema=target.schema, identifier='things', type='view') -%}
  {%- set state = spark_cdc._cdc_state_relation(view) -%}
  {%- set touched = api.Relation.create(identifier='things__cdc_touched', type='view') -%}
  {%- set batch = spark_cdc.cdc_batch_sql('things__cdc_input', 'inventory.products', '2024-01-01 00:00:00', 'debezium', rebuild_keys=true) -%}
  {%- set batch2 = spark_cdc.cdc_batch_sql('things__cdc_input', 'inventory.products', '2024-01-01 00:00:00', 'debezium') -%}
  {%- set scd1_cfg = {'columns': columns, 'delete_handling': 'remove',
                      'meta_column_names': spark_cdc._scd1_default_meta_column_names()} -%}
  {%- set scd2_cfg = {'columns': columns, 'delete_handling': 'new_record', 'valid_to_current': none,
                      'meta_column_names': spark_cdc._scd2_default_meta_column_names()} -%}
  {%- set screen_cfg = {'columns': columns, 'key_columns': ['id'], 'partition_by': ['name'], 'cdc_format': 'debezium'} -%}
  {%- set statements = {
      'screen_count': 'select ' ~ spark_cdc._cdc_rejects_count() ~ ' from (' ~ spark_cdc._cdc_batch_rows_sql(screen_cfg, batch2) ~ ') as s',
      'scd1_create_delta': spark_cdc.cdc_state_table_sql(state, 'delta', ['name'], spark_cdc.scd1_state_sql(batch, none, columns, ['id'], 'debezium')),
      'scd1_touched': 'create or replace temporary view `things__cdc_touched` as ' ~ spark_cdc._cdc_touched_state_sql(batch, state),
      'scd1_merge': spark_cdc.scd1_merge_sql(state, spark_cdc.scd1_merge_source_sql(batch, touched, columns, ['id'], 'debezium'), columns),
      'scd1_merge_simple': spark_cdc.scd1_merge_sql(state, spark_cdc.scd1_merge_source_sql(batch, touched, columns, ['id'], 'debezium', true), columns),
      'scd1_view': spark_cdc._cdc_scd1_view_sql(view, state, 2, '2024-01-02 00:00:00', {'changes': 3, 'simple_batch': true}, [[1, 0, 0]], scd1_cfg),
      'scd2_create_iceberg': spark_cdc.cdc_state_table_sql(state, 'iceberg', [], spark_cdc.scd2_state_sql(batch2, none, columns, ['id'], 'debezium', ['weight'])),
      'scd2_create_hudi': spark_cdc.cdc_state_table_sql(state, 'hudi', [], spark_cdc.scd2_state_sql(batch2, none, columns, ['id'], 'debezium', ['weight'])),
      'scd2_touched': 'create or replace temporary view `things__cdc_touched` as ' ~ spark_cdc._cdc_touched_state_sql(batch2, state),
      'scd2_merge': spark_cdc.scd2_merge_sql(state, spark_cdc.scd2_merge_source_sql(batch2, touched, columns, ['id'], 'debezium', ['weight']), columns),
      'scd2_view': spark_cdc._cdc_scd2_view_sql(view, state, 2, '2024-01-02 00:00:00', {'changes': 3}, [[4, 1]], scd2_cfg),
  } -%}
  {%- set out = adapter.quote(target.schema) ~ '.merge_statements' -%}
  {% do run_query('create database if not exists ' ~ adapter.quote(target.schema)) %}
  {% do run_query('drop table if exists ' ~ out) %}
  {% do run_query('create table ' ~ out ~ ' (name string, sql string) using parquet') %}
  {%- for name, sql in statements.items() -%}
    {% do run_query('insert into ' ~ out ~ ' values (' ~ spark_cdc._sql_string(name) ~ ', ' ~ spark_cdc._sql_string(sql) ~ ')') %}
  {%- endfor -%}
{%- endmacro %}
