{#- Every rejected record, with a stable reason code; the run goes on without it. Besides the
    records staging rejected, every change in a sequence conflict (reason sequence_conflict) and every
    change a CDC target could not apply faithfully (its `<model>__cdc_rejected` table: type_mismatch,
    unrepresentable_key, unstorable_partition_value). -#}
{{ config(enabled=(spark_cdc.enabled_formats() | length > 0)) }}
{{ spark_cdc.union_staged('quarantined', [
    'cdc_format', 'source_table', 'reason_code', 'reason_detail', 'raw_value', 'raw_key', 'raw_ref',
    'ingested_at', 'cdc_loaded_at']) }}
union all
{#- Staged changes keep their parsed images, not the message text: raw_value shows the change as
    the stream carried it, and raw_ref leads to the raw row. #}
select
  cdc_format,
  source_table,
  'sequence_conflict' as reason_code,
  concat('key ', key, ' at seq ', to_json(seq), ' has ', distinct_changes, ' different changes; none is applied') as reason_detail,
  {#- op is one of the canonical names; the images are JSON object text already. #}
  concat('{"op": "', op, '", "before": ', coalesce(before, 'null'), ', "after": ', coalesce(after, 'null'), '}') as raw_value,
  cast(null as string) as raw_key,
  raw_ref,
  ingested_at,
  cdc_loaded_at
from {{ ref('cdc_sequence_conflicts') }}
where row_kind = 'conflict'
{%- for relation in spark_cdc._cdc_rejected_relations() %}
union all
select cdc_format, source_table, reason_code, reason_detail, raw_value, raw_key, raw_ref, ingested_at, cdc_loaded_at
from {{ relation }}
{%- endfor %}
