{#- Broken: key 2, whose last change is a delete (30), is still visible with its insert (10). -#}
{{ config(materialized='view') }}
select * from {{ ref('contracts_targets_scd1_ok') }}
union all
select
  2 as id, 'b' as name, 'insert' as _cdc_op,
  named_struct('s1', cast(10 as decimal(38,0)), 's2', cast(10 as decimal(38,0)), 's3', cast(null as decimal(38,0))) as _cdc_seq,
  timestamp_seconds(1767225610) as _cdc_commit_ts,
  timestamp'2026-01-02 00:00:01' as _cdc_applied_at
