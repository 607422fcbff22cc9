{#- Data messages staged as quarantined `missing_metadata` in stg_cdc__qlik_replicate, parsed again
    against every table version staged so far; those that now parse to a change are emitted here
    once (the quarantined row stays, as the record of what happened). Incremental (append). -#}
{{ config(enabled=spark_cdc.format_enabled('qlik_replicate'), **spark_cdc._package_table_config()) }}
{%- set staged = ref('stg_cdc__qlik_replicate') %}
{#- Rows without an order value are recognised by their text on later runs. #}
select
  {{- spark_cdc._staged_select_list({
      'raw_ref': spark_cdc._staged_raw_ref(),
      'cdc_loaded_at': 'current_timestamp()',
      'raw_value': 'case when raw_order is null then raw_value end',
      'raw_key': 'case when raw_order is null then raw_key end',
  }) }}
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
