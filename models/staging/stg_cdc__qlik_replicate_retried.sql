{#- Data messages staged as quarantined `missing_metadata` in stg_cdc__qlik_replicate, parsed again
    against every table version staged so far; those that now parse to a change are emitted here
    once (the quarantined row stays, as the record of what happened). Incremental (append). -#}
{{ config(enabled=spark_cdc.format_enabled('qlik_replicate'), **spark_cdc._package_table_config()) }}
{%- set staged = ref('stg_cdc__qlik_replicate') %}
select
  cdc_format,
  source_table,
  op,
  op_raw,
  key,
  before_key,
  after,
  before,
  present_columns,
  changed_columns,
  seq,
  commit_ts,
  emitted_at,
  tx_id,
  is_snapshot,
  type_hints,
  named_struct(
    'relation', raw_relation,
    'partition', raw_partition,
    'order', raw_order,
    'fragment_count', 1
  ) as raw_ref,
  ingested_at,
  current_timestamp() as cdc_loaded_at,
  record_status,
  reason_code,
  reason_detail,
  {#- Rows without an order value are recognised by their text on later runs. -#}
  case when raw_order is null then raw_value end as raw_value,
  case when raw_order is null then raw_key end as raw_key,
  raw_digest
from (
  with raw_messages as (
    select
      q.raw_value,
      q.raw_value as raw_text,
      q.raw_key,
      q.raw_ref.order as raw_order,
      q.raw_ref.partition as raw_partition,
      q.raw_ref.relation as raw_relation,
      q.raw_digest,
      'new' as raw_delivery,
      q.ingested_at
    from {{ staged }} as q
    {%- if is_incremental() %}
    left anti join {{ this }} as done
      on done.raw_ref.partition <=> q.raw_ref.partition
     and done.raw_ref.order <=> q.raw_ref.order
     and done.raw_ref.relation = q.raw_ref.relation
     and (q.raw_ref.order is not null or done.raw_value <=> q.raw_value)
    {%- endif %}
    where q.record_status = 'quarantined' and q.reason_code = 'missing_metadata'
  ),
  {{ spark_cdc.parse_qlik_replicate('raw_messages', staged) }}
) as parsed
where record_status = 'change'
