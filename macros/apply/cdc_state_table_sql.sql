{#- The CREATE TABLE ... AS statement of a MERGE target's state table (`<model>__cdc_state`) from
    `select_sql` (the complete state, as scd1_state_sql / scd2_state_sql return it). Delta and
    Iceberg get CREATE OR REPLACE (atomic, also on --full-refresh); other formats a plain CREATE,
    the caller drops the table first. `tblproperties`: {name: value} set on the table. -#}
{% macro cdc_state_table_sql(relation, file_format, partition_by, select_sql, tblproperties={}) -%}
  {{ return(adapter.dispatch('cdc_state_table_sql', 'spark_cdc')(relation, file_format, partition_by, select_sql, tblproperties)) }}
{%- endmacro %}

{% macro default__cdc_state_table_sql(relation, file_format, partition_by, select_sql, tblproperties={}) -%}
create {{ 'or replace ' if file_format in ('delta', 'iceberg') }}table {{ relation }}
using {{ file_format }}
{%- if partition_by %}
partitioned by ({% for p in partition_by %}{{ spark_cdc.quote_identifier(p) }}{{ ', ' if not loop.last }}{% endfor %})
{%- endif %}
{{ spark_cdc._cdc_tblproperties_clause(tblproperties) }}
as
{{ select_sql }}
{%- endmacro %}
