{#- Validate a cdc_scd1 model's configuration before anything is written; returns it normalised.
    Every error names the model, the setting and the fix. Settings shared with cdc_scd2 are checked
    by _cdc_validate_target. -#}
{% macro _cdc_scd1_validate(model, config) -%}
  {%- set cfg = spark_cdc._cdc_validate_target(model, config, 'cdc_scd1') -%}
  {%- set delete_handling = config.get('delete_handling', 'remove') -%}
  {%- if delete_handling not in ('remove', 'flag') -%}
    {{ exceptions.raise_compiler_error("spark_cdc: model '" ~ model['name'] ~ "' (materialized='cdc_scd1') sets delete_handling='" ~ delete_handling ~ "'" ~ (", a cdc_scd2 value" if delete_handling in ('new_record', 'invalidate') else "") ~ ". Fix: use 'remove' (deleted keys disappear) or 'flag' (deleted keys stay with _cdc_deleted = true); or materialized='cdc_scd2' to keep deleted keys' history.") }}
  {%- endif -%}
  {%- set named = spark_cdc._cdc_meta_column_names(model, config, cfg, 'cdc_scd1',
                    spark_cdc._scd1_default_meta_column_names(), spark_cdc._scd1_meta_column_types()) -%}
  {%- for c in named['data_columns'] if c.name | lower in ('_cdc_key', '_cdc_ord') -%}
    {{ exceptions.raise_compiler_error("spark_cdc: column '" ~ c.name ~ "' of model '" ~ model['name'] ~ "' has a name cdc_scd1 keeps for its own columns. Fix: select the source column under another name in the model, or drop it from the yml.") }}
  {%- endfor -%}
  {%- do cfg.update({
      'delete_handling': delete_handling,
      'meta_column_names': named['meta'],
      'columns': named['data_columns'],
  }) -%}
  {{ return(cfg) }}
{%- endmacro %}

{#- The default names of cdc_scd1's metadata columns (_cdc_op, _cdc_seq, _cdc_commit_ts,
    _cdc_applied_at, _cdc_deleted), by meta_column_names key. -#}
{% macro _scd1_default_meta_column_names() -%}
  {{ return({
      'op': '_cdc_op',
      'seq': '_cdc_seq',
      'commit_ts': '_cdc_commit_ts',
      'applied_at': '_cdc_applied_at',
      'deleted': '_cdc_deleted',
  }) }}
{%- endmacro %}

{#- The Spark types of cdc_scd1's metadata columns, by meta_column_names key. -#}
{% macro _scd1_meta_column_types() -%}
  {{ return({
      'op': 'string',
      'seq': 'struct<s1:decimal(38,0),s2:decimal(38,0),s3:decimal(38,0)>',
      'commit_ts': 'timestamp',
      'applied_at': 'timestamp',
      'deleted': 'boolean',
  }) }}
{%- endmacro %}
