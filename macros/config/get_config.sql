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
  {%- set debezium = spark_cdc._deep_merge(raw_defaults, {
      'unavailable_value_placeholder': '__debezium_unavailable_value',
  }) -%}
  {{ return({
      'file_format': 'parquet',
      'python_submission_method': 'session',
      'max_payload_bytes': 16777216,
      'formats': {
          'debezium': debezium,
      },
      'tables': {},
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
