{#- Names of a CDC target's metadata columns, like dbt snapshot's snapshot_meta_column_names:
    `defaults` (key -> default name) overridden by config meta_column_names, validated (known keys,
    non-empty, distinct). The yml may document the metadata columns (with their own types, `types`);
    every other declared column is decoded from the change images. A declared column of another type
    under a metadata name is a source column colliding with it: an error naming the fix.
    Returns {'meta': key -> name, 'data_columns': the declared columns that are not metadata}. -#}
{% macro _cdc_meta_column_names(model, config, cfg, materialization, defaults, types) -%}
  {%- set model_name = model['name'] -%}
  {%- set meta = {} -%}
  {%- do meta.update(defaults) -%}
  {%- set given = config.get('meta_column_names') or {} -%}
  {%- if given is not mapping -%}
    {{ exceptions.raise_compiler_error("spark_cdc: meta_column_names of model '" ~ model_name ~ "' must be a mapping (e.g. {'" ~ (meta.keys() | list | first) ~ "': 'my_name'}). Fix: give a dict whose keys are among " ~ (meta.keys() | list | join(', ')) ~ ".") }}
  {%- endif -%}
  {%- for k, v in given.items() -%}
    {%- if k not in meta -%}
      {% set msg %}
spark_cdc: meta_column_names of model '{{ model_name }}' (materialized='{{ materialization }}') has an unknown key '{{ k }}'.
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
  {%- set data_columns = [] -%}
  {%- for c in cfg['columns'] -%}
    {%- set k = seen.get(c.name | lower) -%}
    {%- if k is none -%}
      {%- do data_columns.append(c) -%}
    {%- elif ((c.data_type or '') | lower | replace(' ', '')) != types[k] or c.name in cfg['key_columns'] or c.name in cfg['partition_by'] -%}
      {% set msg %}
spark_cdc: column '{{ c.name }}' ({{ c.data_type }}) of model '{{ model_name }}' has the name of the metadata column meta_column_names.{{ k }}, which {{ materialization }} writes itself ({{ types[k] }}).
Fix: rename the metadata column with config(meta_column_names={'{{ k }}': '<another name>'}), or, if the yml only documents the metadata column, give it data_type {{ types[k] }}.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return({'meta': meta, 'data_columns': data_columns}) }}
{%- endmacro %}
