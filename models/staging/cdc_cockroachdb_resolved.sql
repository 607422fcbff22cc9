{#- CockroachDB resolved timestamps: per source table, raw relation and raw partition, the highest
    resolved HLC staged so far (compared as (wall, logical), never as a float). -#}
{{ config(materialized='view', enabled=spark_cdc.format_enabled('cockroachdb')) }}
select
  source_table,
  raw_ref.relation as raw_relation,
  raw_ref.partition as raw_partition,
  max_by(seq.s1, struct(seq.s1, seq.s2)) as resolved_wall,
  max_by(seq.s2, struct(seq.s1, seq.s2)) as resolved_logical,
  max_by(concat(cast(seq.s1 as string), '.', lpad(cast(seq.s2 as string), 10, '0')), struct(seq.s1, seq.s2)) as resolved_hlc,
  max_by(commit_ts, struct(seq.s1, seq.s2)) as resolved_at,
  count(*) as resolved_messages,
  max(cdc_loaded_at) as last_loaded_at
from {{ ref('stg_cdc__cockroachdb') }}
where record_status = 'skipped' and reason_code = 'resolved'
group by source_table, raw_ref.relation, raw_ref.partition
