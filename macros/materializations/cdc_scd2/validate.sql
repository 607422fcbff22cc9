{#- Validate a cdc_scd2 model's configuration before anything is written; returns it normalised.
    Every error names the model, the setting and the fix. -#}
{% macro _cdc_scd2_validate(model, config) -%}
  {%- set model_name = model['name'] -%}
  {%- set cfg = spark_cdc._cdc_validate_target(model, config, 'cdc_scd2') -%}

  {%- set named = spark_cdc._cdc_meta_column_names(model, config, cfg, 'cdc_scd2',
                    spark_cdc._scd2_default_meta_column_names(), spark_cdc._scd2_meta_column_types()) -%}
  {%- set meta = named['meta'] -%}
  {%- set data_columns = named['data_columns'] -%}
  {%- do cfg.update({'columns': data_columns}) -%}
  {%- set column_names = data_columns | map(attribute='name') | list -%}
  {%- set value_names = column_names | reject('in', cfg['key_columns']) | list -%}

  {#- History tracking: which columns open a new version when they change. -#}
  {%- set only = config.get('track_history_columns') -%}
  {%- set except = config.get('track_history_except_columns') -%}
  {%- if only is not none and except is not none -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' sets both track_history_columns and track_history_except_columns.
Fix: keep one of them: track_history_columns lists the columns whose changes open a new version, track_history_except_columns the columns whose changes do not.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set setting = 'track_history_columns' if only is not none else 'track_history_except_columns' -%}
  {%- set listed = only if only is not none else except -%}
  {%- set listed = [listed] if listed is string else (listed or []) -%}
  {%- for c in listed if c not in value_names and not cfg['infer_columns'] -%}
    {% set msg %}
spark_cdc: {{ setting }} of model '{{ model_name }}' names '{{ c }}', which is not a declared non-key column ({{ value_names | join(', ') }}).
Fix: correct the name, or declare the column in the model's yml (key columns never change within a key's history and cannot be listed).
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endfor -%}
  {%- if only is not none and not listed -%}
    {% set msg %}
spark_cdc: track_history_columns of model '{{ model_name }}' is empty, so no change would ever open a new version.
Fix: list at least one column, or remove the setting to track every column.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set track_columns = listed if only is not none else (value_names | reject('in', listed) | list) -%}

  {%- set delete_handling = config.get('delete_handling', 'new_record') -%}
  {%- if delete_handling not in ('new_record', 'invalidate') -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' (materialized='cdc_scd2') sets delete_handling='{{ delete_handling }}'{{ ', a cdc_scd1 value' if delete_handling in ('remove', 'flag') else '' }}.
Fix: use 'new_record' (a delete closes the open version and opens a deleted version) or 'invalidate' (a delete only closes the open version).
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}

  {%- for c in column_names if c | lower in ('_cdc_key', '_cdc_valid_from_ord', '_cdc_changes') or (c | lower in spark_cdc._scd2_default_meta_column_names().values() | list) -%}
    {% set msg %}
spark_cdc: column '{{ c }}' of model '{{ model_name }}' has a name cdc_scd2 keeps for its own columns (_cdc_key, _cdc_changes, _cdc_valid_*, ...).
Fix: select the source column under another name in the model, or drop it from the yml.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endfor -%}

  {%- do cfg.update({
      'track_only': listed if only is not none else none,
      'track_except': listed if only is none else [],
      'track_columns': track_columns,
      'delete_handling': delete_handling,
      'meta_column_names': meta,
      'valid_to_current': config.get('valid_to_current'),
  }) -%}
  {{ return(cfg) }}
{%- endmacro %}

{#- The default names of cdc_scd2's metadata columns (_cdc_valid_from ... _cdc_commit_ts), by
    meta_column_names key. -#}
{% macro _scd2_default_meta_column_names() -%}
  {{ return({
      'valid_from': '_cdc_valid_from',
      'valid_to': '_cdc_valid_to',
      'valid_from_seq': '_cdc_valid_from_seq',
      'valid_to_seq': '_cdc_valid_to_seq',
      'is_current': '_cdc_is_current',
      'is_deleted': '_cdc_is_deleted',
      'op': '_cdc_op',
      'seq': '_cdc_seq',
      'commit_ts': '_cdc_commit_ts',
  }) }}
{%- endmacro %}

{#- The Spark types of cdc_scd2's metadata columns, by meta_column_names key. -#}
{% macro _scd2_meta_column_types() -%}
  {%- set seq_type = 'struct<s1:decimal(38,0),s2:decimal(38,0),s3:decimal(38,0)>' -%}
  {{ return({
      'valid_from': 'timestamp', 'valid_to': 'timestamp',
      'valid_from_seq': seq_type, 'valid_to_seq': seq_type,
      'is_current': 'boolean', 'is_deleted': 'boolean',
      'op': 'string', 'seq': seq_type, 'commit_ts': 'timestamp',
  }) }}
{%- endmacro %}
