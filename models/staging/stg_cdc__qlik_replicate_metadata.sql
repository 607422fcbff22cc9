{#- The Qlik Replicate table-version registry: one row per distinct table structure announced by a
    metadata message (table, tableVersion, columns with ordinals, types and primary-key positions,
    dataSchema). Incremental (append): a redelivered metadata message adds nothing. -#}
{{ config(enabled=spark_cdc.format_enabled('qlik_replicate'), **spark_cdc._package_table_config()) }}
with announced as (
  select
    s.source_table,
    from_json(s.after, {{ spark_cdc._sql_string(spark_cdc.qlik_replicate_metadata_schema()) }}) as md,
    s.raw_ref,
    s.cdc_loaded_at
  from {{ ref('stg_cdc__qlik_replicate') }} as s
  where s.record_status = 'skipped' and s.reason_code = 'metadata'
  {%- if is_incremental() %}
    and s.cdc_loaded_at > (select coalesce(max(registered_at), timestamp '1970-01-01 00:00:00') from {{ this }})
  {%- endif %}
),

versions as (
  select
    source_table,
    md.table_version,
    md.schema_id,
    md.server,
    md.task,
    md.timestamp as metadata_timestamp,
    md.columns,
    transform(
      array_sort(transform(
        filter(md.columns, c -> c.primary_key_position > 0),
        c -> named_struct('position', c.primary_key_position, 'name', c.name)
      )),
      p -> p.name
    ) as primary_key,
    md.data_schema,
    sha2(to_json(named_struct('columns', md.columns, 'data_schema', md.data_schema)), 256) as structure_hash,
    raw_ref,
    cdc_loaded_at as registered_at,
    row_number() over (
      partition by
        source_table, md.table_version,
        sha2(to_json(named_struct('columns', md.columns, 'data_schema', md.data_schema)), 256)
      order by raw_ref.order, raw_ref.partition
    ) as nth
  from announced
)

select
  v.source_table,
  v.table_version,
  v.schema_id,
  v.server,
  v.task,
  v.metadata_timestamp,
  v.columns,
  v.primary_key,
  v.data_schema,
  v.structure_hash,
  v.raw_ref,
  v.registered_at
from versions as v
{%- if is_incremental() %}
left anti join {{ this }} as seen
  on seen.source_table = v.source_table
 and seen.table_version <=> v.table_version
 and seen.structure_hash = v.structure_hash
{%- endif %}
where v.nth = 1
