{#- The one reader of package options: var('spark_cdc') deep-merged over the documented defaults. -#}
{% macro get_config() -%}
  {{ return(adapter.dispatch('get_config', 'spark_cdc')()) }}
{%- endmacro %}

{% macro default__get_config() -%}
  {%- set user = var('spark_cdc', {}) -%}
  {%- if user is not mapping -%}
    {{ exceptions.raise_compiler_error("spark_cdc: var 'spark_cdc' must be a mapping (see README, Configuration); got: " ~ user) }}
  {%- endif -%}
  {{ return(spark_cdc._deep_merge(spark_cdc._default_config(), user)) }}
{%- endmacro %}

{% macro _default_config() -%}
  {%- set raw_defaults = {
      'enabled': false,
      'relation': none,
      'source': none,
      'value_column': 'value',
      'key_column': none,
      'order_column': 'offset',
      'partition_column': none,
      'ingested_at_column': none,
  } -%}
  {#- Each format's own options; the keys a format reads are documented in README, Configuration. -#}
  {%- set format_options = {
      'debezium': {
          'unavailable_value_placeholder': '__debezium_unavailable_value',
      },
      'aurora_dsql': {
          'incomplete_chunk_max_age_hours': 24,
      },
      'qlik_replicate': {
          'source_table': none,
          'max_mask_hex_digits': 4096,
      },
      'ydb': {
          'source_table': none,
      },
      'cockroachdb': {
          'envelope': 'wrapped',
          'order_by': 'auto',
          'source_table': none,
          'event_op_column': 'op',
          'previous_row_column': 'cdc_prev',
      },
  } -%}
  {%- set formats = {} -%}
  {%- for name, options in format_options.items() -%}
    {%- do formats.update({name: spark_cdc._deep_merge(raw_defaults, options)}) -%}
  {%- endfor -%}
  {{ return({
      'file_format': 'parquet',
      'python_submission_method': 'session',
      'max_payload_bytes': 16777216,
      'formats': formats,
      'tables': {},
      'contracts': {
          'quarantine_severity': 'warn',
          'completeness_allow_unstaged': false,
          'lag_measure': 'processing',
          'lag_warn_after': {'count': 1, 'period': 'hour'},
          'lag_error_after': none,
          'pending_chunk_max_age': none,
      },
  }) }}
{%- endmacro %}

{% macro _deep_merge(base, override) -%}
  {%- set merged = {} -%}
  {%- do merged.update(base) -%}
  {%- for k, v in override.items() -%}
    {%- if v is mapping and base.get(k) is mapping -%}
      {%- do merged.update({k: spark_cdc._deep_merge(base[k], v)}) -%}
    {%- else -%}
      {%- do merged.update({k: v}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(merged) }}
{%- endmacro %}
