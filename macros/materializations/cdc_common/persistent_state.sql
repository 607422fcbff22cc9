{#- What the two persistent storages (the MERGE state table, strategy_merge.sql; the partitioned
    parts table, strategy_partitions.sql) share around their view swap. Unlike a versioned rewrite,
    whose view keeps pointing at the previous version table until the swap, they write the one
    table the view reads, so between the write and the swap the view's TBLPROPERTIES describe a
    table that has changed. -#}

{#- A --full-refresh replaces the table before the view swap records what the new one holds. A run
    killed in between would leave the old view's facts over the new table: the counts the
    partitioned storage carries forward from the view, and the facts that send the next run down
    the short statements (spark_cdc.partial_rows, spark_cdc.whole_images), which a full refresh under
    a changed configuration (truncate_handling, columns) can make untrue. They are removed first, so
    that the next run, if it comes to that, recounts and takes the general statements; the swap of
    a full refresh that completes writes them again (cdc_scd2 takes its whole-image statement again
    only after one completes: spark_cdc.whole_images, once cleared, stays cleared). The same holds
    when the full refresh switches storage (versioned to partitioned or MERGE, or between those
    two): the old view then reads the new storage's table until the swap. Nothing runs when there
    is no view this kind continues (a first build; a view of the other kind, which cdc_scd1's full
    refresh drops first and cdc_scd2's refuses to continue until a full refresh completes). -#}
{% macro _cdc_forget_state_facts(target_relation, state, cfg) -%}
  {%- set k = spark_cdc._cdc_kind(cfg['materialization']) -%}
  {%- if not cfg['full_refresh'] or not state['owned'] or state['materialization'] not in k['accepts'] -%}
    {{ return(none) }}
  {%- endif -%}
  {%- call statement('cdc_forget_facts') -%}
    alter view {{ target_relation }} unset tblproperties if exists (
      {%- for name in k['count_properties'] + ['spark_cdc.whole_images'] -%}
        {{ spark_cdc._sql_string(name) }}{{ ', ' if not loop.last }}
      {%- endfor -%})
  {%- endcall -%}
{%- endmacro %}

{#- Called by both persistent storages after writing their table and before the view swap.
    Integration tests override it (dispatch) to stop a run there, as a crash would. -#}
{% macro _cdc_before_view_swap(target_relation) -%}
  {{ return(adapter.dispatch('cdc_before_view_swap', 'spark_cdc')(target_relation)) }}
{%- endmacro %}

{% macro default__cdc_before_view_swap(target_relation) -%}
{%- endmacro %}
