{#- Commit-to-processing lag of the canonical change stream: one row per source table and staging
    run, with lag percentiles in exact milliseconds. Snapshot rows are counted but not measured: their
    commit_ts is when the snapshot read them, not a commit. -#}
{{ config(enabled=(spark_cdc.enabled_formats() | length > 0), materialized='view') }}
with measured as (
  select
    cdc_format,
    source_table,
    cdc_loaded_at,
    commit_ts,
    is_snapshot,
    case when not is_snapshot then unix_millis(emitted_at) - unix_millis(commit_ts) end as processing_lag_ms,
    case when not is_snapshot then unix_millis(ingested_at) - unix_millis(commit_ts) end as landing_lag_ms,
    case when not is_snapshot then unix_millis(cdc_loaded_at) - unix_millis(commit_ts) end as load_lag_ms
  from {{ ref('cdc_changes') }}
)

select
  cdc_format,
  source_table,
  cdc_loaded_at,
  count(*) as changes,
  count_if(is_snapshot) as snapshot_changes,
  min(commit_ts) as first_commit_ts,
  max(commit_ts) as last_commit_ts,
  percentile_approx(processing_lag_ms, 0.5) as processing_lag_ms_p50,
  percentile_approx(processing_lag_ms, 0.95) as processing_lag_ms_p95,
  max(processing_lag_ms) as processing_lag_ms_max,
  percentile_approx(landing_lag_ms, 0.5) as landing_lag_ms_p50,
  percentile_approx(landing_lag_ms, 0.95) as landing_lag_ms_p95,
  max(landing_lag_ms) as landing_lag_ms_max,
  percentile_approx(load_lag_ms, 0.5) as load_lag_ms_p50,
  percentile_approx(load_lag_ms, 0.95) as load_lag_ms_p95,
  max(load_lag_ms) as load_lag_ms_max
from measured
group by cdc_format, source_table, cdc_loaded_at
