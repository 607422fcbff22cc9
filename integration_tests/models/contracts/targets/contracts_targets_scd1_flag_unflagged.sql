{#- Broken, delete_handling='flag': key 2's tombstone (delete 30) is not flagged deleted. -#}
{{ config(materialized='view') }}
select *, false as _cdc_deleted from {{ ref('contracts_targets_scd1_ok') }}
union all
select
  2 as id, 'b' as name, 'delete' as _cdc_op,
  named_struct('s1', cast(30 as decimal(38,0)), 's2', cast(30 as decimal(38,0)), 's3', cast(null as decimal(38,0))) as _cdc_seq,
  timestamp_seconds(1767225630) as _cdc_commit_ts,
  timestamp'2026-01-02 00:00:01' as _cdc_applied_at,
  false as _cdc_deleted
