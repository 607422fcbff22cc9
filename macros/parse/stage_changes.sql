{#- The body of a staging model: unstaged raw rows of `format`, parsed into one row per raw record
    (record_status change | quarantined | skipped), with lineage and the load timestamp. -#}
{% macro stage_changes(format) -%}
  {{ return(adapter.dispatch('stage_changes', 'spark_cdc')(format)) }}
{%- endmacro %}

{% macro default__stage_changes(format) -%}
  {%- set parsers = {
      'debezium': spark_cdc.parse_debezium,
      'aurora_dsql': spark_cdc.parse_aurora_dsql,
      'qlik_replicate': spark_cdc.parse_qlik_replicate,
      'ydb': spark_cdc.parse_ydb,
      'cockroachdb': spark_cdc.parse_cockroachdb,
  } -%}
  {%- if format not in parsers -%}
    {{ exceptions.raise_compiler_error("spark_cdc: no parser for format '" ~ format ~ "'. Known: " ~ (parsers.keys() | list | join(', '))) }}
  {%- endif -%}
  {%- set markers = spark_cdc._raw_value_markers() -%}
  {%- set reason_detail -%}
  case
    when reason_code = 'malformed_json' and startswith(raw_value, {{ spark_cdc._sql_string(markers['utf8']) }})
      then 'the value is not valid UTF-8, so not JSON'
    when reason_code = 'malformed_json' and startswith(raw_value, {{ spark_cdc._sql_string(markers['one_value']) }})
      then 'more text after the first JSON value (two messages in one value?)'
    when raw_delivery = 'duplicate' then 'the same content was staged at this position before'
    when raw_delivery = 'position_reused'
      then 'another content is staged at this position (relation, partition, order): the position columns do not identify each record (a topic recreated, several topics in one relation without a topic column)'
    else reason_detail
  end
  {%- endset -%}
  {#- A record delivered again at its position (raw_messages) is counted, not staged twice; another
      content at a position already staged is quarantined: it would otherwise hide behind the
      watermark, unread. Raw text is kept only where a person must look at it (quarantine) or where
      it identifies a row that has no order value; applied changes keep their parsed images instead.
      A value over max_payload_bytes keeps only its head (_oversized_value_head): the raw relation
      holds the whole, at raw_ref, and raw_digest identifies it. -#}
  {%- set keep_raw = "record_status = 'quarantined' or raw_delivery = 'position_reused' or raw_order is null" %}
select
  {{- spark_cdc._staged_select_list({
      'before_key': "case when record_status = 'change' then before_key end",
      'raw_ref': spark_cdc._staged_raw_ref(),
      'cdc_loaded_at': 'current_timestamp()',
      'record_status': "case raw_delivery when 'duplicate' then 'skipped' when 'position_reused' then 'quarantined' else record_status end",
      'reason_code': "case when raw_delivery in ('duplicate', 'position_reused') then raw_delivery else reason_code end",
      'reason_detail': reason_detail,
      'raw_value': "case when reason_code = 'payload_too_large' then " ~ spark_cdc._oversized_value_head('raw_value')
                   ~ ' when ' ~ keep_raw ~ ' then raw_value end',
      'raw_key': 'case when ' ~ keep_raw ~ ' then raw_key end',
  }) }}
from (
  with raw_messages as (
    {{ spark_cdc.raw_messages(format) }}
  ),
  {{ parsers[format]('raw_messages') }}
) as parsed
{%- endmacro %}
