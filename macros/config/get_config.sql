{#- The one reader of package options: var('spark_cdc') deep-merged over the documented defaults. -#}
{% macro get_config() -%}
  {{ return(adapter.dispatch('get_config', 'spark_cdc')()) }}
{%- endmacro %}

{% macro default__get_config() -%}
  {%- set user = var('spark_cdc', {}) -%}
  {%- if user is not mapping -%}
    {{ exceptions.raise_compiler_error("spark_cdc: var 'spark_cdc' must be a mapping; got: " ~ user ~ ". Fix: under vars: in dbt_project.yml (or --vars), give spark_cdc: {formats: {...}, tables: {...}} (README, Configuration).") }}
  {%- endif -%}
  {%- set defaults = spark_cdc._default_config() -%}
  {%- do spark_cdc._check_config_keys(user, defaults) -%}
  {{ return(spark_cdc._deep_merge(defaults, user)) }}
{%- endmacro %}

{#- A misspelt option would otherwise be merged in and never read: a format the user believes enabled
    stays off, a primary key is never used. Unknown keys fail at parse time, naming the key, the
    known ones and where to fix it. `tables` are the user's own names; their options are checked. -#}
{% macro _check_config_keys(user, defaults) -%}
  {%- set checks = [('', user, defaults.keys() | list)] -%}
  {%- for fmt, options in (user.get('formats') or {}).items() -%}
    {%- if fmt in defaults['formats'] and options is mapping -%}
      {%- do checks.append(('formats.' ~ fmt ~ '.', options, defaults['formats'][fmt].keys() | list)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if user.get('formats') is mapping -%}
    {%- do checks.append(('formats.', user['formats'], defaults['formats'].keys() | list)) -%}
  {%- endif -%}
  {%- if user.get('contracts') is mapping -%}
    {%- do checks.append(('contracts.', user['contracts'], defaults['contracts'].keys() | list)) -%}
  {%- endif -%}
  {%- for table, options in (user.get('tables') or {}).items() if options is mapping -%}
    {%- do checks.append(('tables.' ~ table ~ '.', options, ['primary_key', 'column_types', 'ydb_column_types'])) -%}
  {%- endfor -%}
  {%- for prefix, given, known in checks -%}
    {%- for key in given.keys() if key not in known -%}
      {% set msg %}
spark_cdc: var('spark_cdc') has an unknown {{ 'format' if prefix == 'formats.' else 'option' }} '{{ prefix }}{{ key }}' (known here: {{ known | join(', ') }}).
Fix: correct the name under vars: spark_cdc: in dbt_project.yml (README, Configuration lists every option).
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endfor -%}
  {%- endfor -%}
{%- endmacro %}

{#- The documented defaults of var('spark_cdc') (README, Configuration), merged under the user's value
    by get_config. -#}
{% macro _default_config() -%}
  {%- set raw_defaults = {
      'enabled': false,
      'relation': none,
      'source': none,
      'ref': none,
      'value_column': 'value',
      'key_column': none,
      'order_column': 'offset',
      'partition_column': none,
      'position_columns': none,
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
      'max_payload_bytes': 4194304,
      'max_inferred_columns': 1000,
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

{#- Recursive merge of two mappings: values of override win, nested mappings are merged key by key. -#}
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

{#- Config of the package's own tables (staging models, the sequence-conflict log), passed to their
    config(): file_format from var('spark_cdc').file_format when the project sets it, else nothing, so
    that `models: spark_cdc: +file_format` in the project's dbt_project.yml (or dbt-spark's default,
    parquet) applies. Read here because dbt renders the package's dbt_project.yml before the
    project's vars exist. -#}
{% macro _package_table_config() -%}
  {%- set file_format = var('spark_cdc', {}).get('file_format') -%}
  {{ return({'file_format': file_format} if file_format else {}) }}
{%- endmacro %}
