{#- Validate a cdc_scd2 model's configuration before anything is written; returns it normalised.
    Every error names the model, the setting and the fix. -#}
{% macro _cdc_scd2_validate(model, config) -%}
  {%- set model_name = model['name'] -%}
  {%- set cfg = spark_cdc._cdc_validate_target(model, config, 'cdc_scd2') -%}

  {#- Names of the metadata columns, like dbt snapshot's snapshot_meta_column_names. -#}
  {%- set meta = spark_cdc._scd2_default_meta_column_names() -%}
  {%- set given = config.get('meta_column_names') or {} -%}
  {%- if given is not mapping -%}
    {{ exceptions.raise_compiler_error("spark_cdc: meta_column_names of model '" ~ model_name ~ "' must be a mapping (e.g. {'valid_from': 'valid_from'}). Fix: give a dict whose keys are among " ~ (meta.keys() | list | join(', ')) ~ ".") }}
  {%- endif -%}
  {%- for k, v in given.items() -%}
    {%- if k not in meta -%}
      {% set msg %}
spark_cdc: meta_column_names of model '{{ model_name }}' has an unknown key '{{ k }}'.
Fix: use only these keys: {{ meta.keys() | list | join(', ') }}.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
    {%- if v is not string or not v | trim -%}
      {{ exceptions.raise_compiler_error("spark_cdc: meta_column_names." ~ k ~ " of model '" ~ model_name ~ "' must be a non-empty column name. Fix: give a name, or remove the entry to use the default '" ~ meta[k] ~ "'.") }}
    {%- endif -%}
    {%- do meta.update({k: v}) -%}
  {%- endfor -%}
  {%- set seen = {} -%}
  {%- for k, v in meta.items() -%}
    {%- if v | lower in seen -%}
      {{ exceptions.raise_compiler_error("spark_cdc: meta_column_names." ~ k ~ " and meta_column_names." ~ seen[v | lower] ~ " of model '" ~ model_name ~ "' are both '" ~ v ~ "'. Fix: give each metadata column its own name.") }}
    {%- endif -%}
    {%- do seen.update({v | lower: k}) -%}
  {%- endfor -%}
  {#- The yml may document the metadata columns (with their own types); every other column is
      decoded from the change images. A column of another type under a metadata name is a
      source column colliding with it. -#}
  {%- set meta_types = spark_cdc._scd2_meta_column_types() -%}
  {%- set data_columns = [] -%}
  {%- for c in cfg['columns'] -%}
    {%- set k = seen.get(c.name | lower) -%}
    {%- if k is none -%}
      {%- do data_columns.append(c) -%}
    {%- elif (c.data_type | lower | replace(' ', '')) != meta_types[k] or c.name in cfg['key_columns'] or c.name in cfg['partition_by'] -%}
      {% set msg %}
spark_cdc: column '{{ c.name }}' ({{ c.data_type }}) of model '{{ model_name }}' has the name of the metadata column meta_column_names.{{ k }}, which cdc_scd2 writes itself ({{ meta_types[k] }}).
Fix: rename the metadata column with config(meta_column_names={'{{ k }}': '<another name>'}), or, if the yml only documents the metadata column, give it data_type {{ meta_types[k] }}.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
  {%- endfor -%}
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
  {%- for c in listed if c not in value_names -%}
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
spark_cdc: model '{{ model_name }}' (materialized='cdc_scd2') sets delete_handling='{{ delete_handling }}'.
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
      'track_columns': track_columns,
      'delete_handling': delete_handling,
      'meta_column_names': meta,
      'valid_to_current': config.get('valid_to_current'),
  }) -%}
  {{ return(cfg) }}
{%- endmacro %}

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

{% macro _scd2_meta_column_types() -%}
  {%- set seq_type = 'struct<s1:decimal(38,0),s2:decimal(38,0),s3:decimal(38,0)>' -%}
  {{ return({
      'valid_from': 'timestamp', 'valid_to': 'timestamp',
      'valid_from_seq': seq_type, 'valid_to_seq': seq_type,
      'is_current': 'boolean', 'is_deleted': 'boolean',
      'op': 'string', 'seq': seq_type, 'commit_ts': 'timestamp',
  }) }}
{%- endmacro %}
