{#- The ledger of the change stream: for each enabled format's raw relation, how many raw records
    became what (cdc_record_outcomes_sql). Test cdc_records_accounted lists the unaccounted ones. -#}
{{ config(materialized='view', enabled=(spark_cdc.enabled_formats() | length > 0)) }}
select
  cdc_format,
  raw_relation,
  outcome,
  {#- An unaccounted or unstaged record has no reason code: the step that lost it stands in. #}
  coalesce(reason_code, lost_at) as reason_code,
  count(*) as records
from (
  {%- for format in spark_cdc.enabled_formats() %}
    {{ spark_cdc.cdc_record_outcomes_sql(format) }}
    {%- if not loop.last %}
      union all
    {%- endif %}
  {%- endfor %}
) as records
group by cdc_format, raw_relation, outcome, coalesce(reason_code, lost_at)
