{#- Broken: key 3 gets a closed version that ends where it starts (valid_from_seq = valid_to_seq = 5). -#}
{{ config(materialized='view') }}
select * from {{ ref('contracts_targets_scd2_ok') }}
union all
select
  3 as id, 'c0' as name,
  timestamp_seconds(1767225605) as _cdc_valid_from,
  timestamp_seconds(1767225605) as _cdc_valid_to,
  named_struct('s1', cast(5 as decimal(38,0)), 's2', cast(5 as decimal(38,0)), 's3', cast(null as decimal(38,0))) as _cdc_valid_from_seq,
  named_struct('s1', cast(5 as decimal(38,0)), 's2', cast(5 as decimal(38,0)), 's3', cast(null as decimal(38,0))) as _cdc_valid_to_seq,
  false as _cdc_is_current,
  false as _cdc_is_deleted,
  'insert' as _cdc_op,
  named_struct('s1', cast(5 as decimal(38,0)), 's2', cast(5 as decimal(38,0)), 's3', cast(null as decimal(38,0))) as _cdc_seq,
  timestamp_seconds(1767225605) as _cdc_commit_ts
