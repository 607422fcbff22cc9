{#- CockroachDB changefeed messages (wrapped, bare, key_only and row envelopes) -> canonical change rows plus quarantined and skipped records. Takes the name of a CTE
    shaped like spark_cdc.raw_messages(); see parse_debezium for the output columns. Not implemented
    yet: every record is quarantined (unknown_op), none is dropped. -#}
{% macro parse_cockroachdb(raw_cte) -%}
  {{ return(adapter.dispatch('parse_cockroachdb', 'spark_cdc')(raw_cte)) }}
{%- endmacro %}

{% macro default__parse_cockroachdb(raw_cte) -%}
  cockroachdb_parsed as (
    select r.* from {{ raw_cte }} as r
  )

  select
    'cockroachdb' as cdc_format,
    cast(null as string) as source_table,
    cast(null as string) as op,
    cast(null as string) as op_raw,
    cast(null as string) as key,
    cast(null as string) as after,
    cast(null as string) as before,
    cast(null as array<string>) as present_columns,
    cast(null as array<string>) as changed_columns,
    named_struct('s1', cast(null as decimal(38,0)), 's2', cast(null as decimal(38,0)), 's3', cast(null as decimal(38,0))) as seq,
    cast(null as timestamp) as commit_ts,
    cast(null as timestamp) as emitted_at,
    cast(null as string) as tx_id,
    cast(null as boolean) as is_snapshot,
    cast(null as map<string, string>) as type_hints,
    p.raw_order,
    p.raw_partition,
    p.raw_value,
    p.raw_key,
    p.ingested_at,
    'quarantined' as record_status,
    'unknown_op' as reason_code,
    'parser not implemented yet' as reason_detail
  from cockroachdb_parsed as p
{%- endmacro %}
