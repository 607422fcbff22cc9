{#- Spark here has no Delta/Iceberg/Hudi jars, so tests/integration/test_debezium_storage.py runs the
    MERGE strategy of models with file_format='delta' on parquet: with SPARK_CDC_IT_EMULATE_MERGE
    set, the state table is created as parquet, and the MERGE statement is carried out as the
    equivalent of its clauses (target rows not matched by the source, plus the source rows not
    flagged _cdc_merge_remove), from the very source SELECT the MERGE would read. Everything else
    (touched-row view, source SQL, view swap, watermark) is the package's own code. Unset, these
    overrides hand over to the package. -#}

{% macro spark__cdc_state_table_sql(relation, file_format, partition_by, select_sql) -%}
  {%- if env_var('SPARK_CDC_IT_EMULATE_MERGE', '') -%}
    {% do adapter.drop_relation(relation) %}
    {{ return(spark_cdc.default__cdc_state_table_sql(relation, 'parquet', partition_by, select_sql)) }}
  {%- endif -%}
  {{ return(spark_cdc.default__cdc_state_table_sql(relation, file_format, partition_by, select_sql)) }}
{%- endmacro %}

{% macro spark__scd1_merge_sql(state_relation, source_sql, columns) -%}
  {%- if env_var('SPARK_CDC_IT_EMULATE_MERGE', '') -%}
    {{ return(_it_emulate_merge(state_relation, source_sql, spark_cdc._cdc_scd1_state_columns(columns), 't._cdc_key = s._cdc_key')) }}
  {%- endif -%}
  {{ return(spark_cdc.default__scd1_merge_sql(state_relation, source_sql, columns)) }}
{%- endmacro %}

{% macro spark__scd2_merge_sql(state_relation, source_sql, columns) -%}
  {%- if env_var('SPARK_CDC_IT_EMULATE_MERGE', '') -%}
    {{ return(_it_emulate_merge(state_relation, source_sql, spark_cdc._cdc_scd2_state_columns(columns), 't._cdc_key = s._cdc_key and t._cdc_valid_from_ord <=> s._cdc_valid_from_ord')) }}
  {%- endif -%}
  {{ return(spark_cdc.default__scd2_merge_sql(state_relation, source_sql, columns)) }}
{%- endmacro %}

{#- Runs the emulation (while the materialization renders its statement) and returns a harmless
    statement in place of the MERGE. Also logs the source's size to <schema>.it_merge_log, so the
    test can check the source holds only the touched rows. -#}
{% macro _it_emulate_merge(state_relation, source_sql, state_columns, on_sql) -%}
  {%- set q = adapter.quote -%}
  {%- set cols = state_columns -%}
  {%- set next = api.Relation.create(schema=state_relation.schema, identifier=state_relation.identifier ~ '__it_next', type='table') -%}
  {%- set source = api.Relation.create(schema=state_relation.schema, identifier=state_relation.identifier ~ '__it_source', type='table') -%}
  {% do adapter.drop_relation(next) %}
  {% do adapter.drop_relation(source) %}
  {% do run_query('create table ' ~ source ~ ' using parquet as ' ~ source_sql) %}
  {% do run_query('create table if not exists ' ~ q(state_relation.schema) ~ '.it_merge_log (target string, source_rows bigint, removes bigint, state_rows_before bigint) using parquet') %}
  {% do run_query('insert into ' ~ q(state_relation.schema) ~ '.it_merge_log select ' ~ spark_cdc._sql_string(state_relation.identifier) ~ ', count(*), count_if(_cdc_merge_remove), (select count(*) from ' ~ state_relation ~ ') from ' ~ source) %}
  {%- set next_sql -%}
create table {{ next }} using parquet as
select {% for c in cols %}t.{{ q(c) }}{{ ', ' if not loop.last }}{% endfor %}
from {{ state_relation }} as t
left anti join {{ source }} as s on {{ on_sql }}
union all
select {% for c in cols %}s.{{ q(c) }}{{ ', ' if not loop.last }}{% endfor %}
from {{ source }} as s
where not s._cdc_merge_remove
  {%- endset -%}
  {% do run_query(next_sql) %}
  {%- set order = [] -%}
  {%- for col in adapter.get_columns_in_relation(state_relation) -%}{%- do order.append(q(col.name)) -%}{%- endfor -%}
  {% do run_query('insert overwrite table ' ~ state_relation ~ ' select ' ~ (order | join(', ')) ~ ' from ' ~ next) %}
  {% do adapter.drop_relation(next) %}
  {% do adapter.drop_relation(source) %}
  {{ return("select 'spark_cdc integration tests: MERGE emulated on parquet' as status") }}
{%- endmacro %}
