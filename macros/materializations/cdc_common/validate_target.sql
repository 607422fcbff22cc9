{#- Settings every CDC target shares (cdc_scd1, cdc_scd2), validated before anything is written and
    returned normalised: unique_key, declared columns with data_type, file_format, partition_by,
    cdc_format, source_table. Every error names the model, the setting and the fix. -#}
{% macro _cdc_validate_target(model, config, materialization) -%}
  {%- set model_name = model['name'] -%}
  {%- set unique_key = config.get('unique_key') -%}
  {%- if not unique_key -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' (materialized='{{ materialization }}') has no unique_key.
Fix: add config(unique_key='id') (or a list, e.g. ['order_id', 'item_id']) naming the primary-key columns of the source table.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set key_columns = [unique_key] if unique_key is string else unique_key -%}

  {%- set columns = [] -%}
  {%- for name, col in model['columns'].items() -%}
    {%- if not col.get('data_type') -%}
      {% set msg %}
spark_cdc: column '{{ name }}' of model '{{ model_name }}' has no data_type.
Fix: give every column of a {{ materialization }} model a data_type in its yml (e.g. data_type: bigint); the type decides how change images are decoded.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
    {%- do columns.append({'name': col.get('name', name), 'data_type': col['data_type']}) -%}
  {%- endfor -%}
  {%- if not columns -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' (materialized='{{ materialization }}') declares no columns.
Fix: list the target columns with their data_type under the model's `columns:` in yml.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set column_names = columns | map(attribute='name') | list -%}
  {%- for k in key_columns if k not in column_names -%}
    {% set msg %}
spark_cdc: unique_key column '{{ k }}' of model '{{ model_name }}' is not among its declared columns ({{ column_names | join(', ') }}).
Fix: declare '{{ k }}' with its data_type in the model's yml, or correct unique_key.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endfor -%}

  {%- set file_format = config.get('file_format') or spark_cdc.get_config()['file_format'] -%}
  {%- if file_format not in ['parquet', 'orc'] + spark_cdc._cdc_merge_formats() -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' sets file_format='{{ file_format }}', which {{ materialization }} does not support.
Fix: use file_format='parquet' or 'orc' (rewritten into versioned tables), or 'delta', 'iceberg' or 'hudi' (updated with MERGE INTO).
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}

  {%- set partition_by = config.get('partition_by') -%}
  {%- set partition_by = [partition_by] if partition_by is string else (partition_by or []) -%}
  {%- for p in partition_by if p not in column_names -%}
    {{ exceptions.raise_compiler_error("spark_cdc: partition_by column '" ~ p ~ "' of model '" ~ model_name ~ "' is not a declared column. Fix: declare it in yml or remove it from partition_by.") }}
  {%- endfor -%}

  {#- Which format's changes the target applies (and so how values are decoded). Needed only when
      more than one format is enabled; a single enabled format is the default. -#}
  {%- set enabled = spark_cdc.enabled_formats() -%}
  {%- set cdc_format = config.get('cdc_format') -%}
  {%- if cdc_format is none and enabled | length == 1 -%}
    {%- set cdc_format = enabled[0] -%}
  {%- elif cdc_format is none -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' (materialized='{{ materialization }}') sets no cdc_format, and several formats are enabled ({{ enabled | join(', ') }}).
Fix: add config(cdc_format='<format>') naming the envelope format its source_table arrives in.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- elif cdc_format not in enabled -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' sets cdc_format='{{ cdc_format }}', which is not an enabled format (enabled: {{ enabled | join(', ') or 'none' }}).
Fix: correct cdc_format, or enable the format in var('spark_cdc').formats.{{ cdc_format }}.enabled.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}

  {{ return({
      'cdc_format': cdc_format,
      'key_columns': key_columns,
      'columns': columns,
      'source_table': config.get('source_table'),
      'file_format': file_format,
      'partition_by': partition_by,
  }) }}
{%- endmacro %}
