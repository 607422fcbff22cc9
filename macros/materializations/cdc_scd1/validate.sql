{#- Validate a cdc_scd1 model's configuration before anything is written; returns it normalised.
    Every error names the model, the setting and the fix. Settings shared with cdc_scd2 are checked
    by _cdc_validate_target. -#}
{% macro _cdc_scd1_validate(model, config) -%}
  {%- set cfg = spark_cdc._cdc_validate_target(model, config, 'cdc_scd1') -%}
  {%- set delete_handling = config.get('delete_handling', 'remove') -%}
  {%- if delete_handling not in ('remove', 'flag') -%}
    {{ exceptions.raise_compiler_error("spark_cdc: model '" ~ model['name'] ~ "' sets delete_handling='" ~ delete_handling ~ "'. Fix: use 'remove' (deleted keys disappear) or 'flag' (deleted keys stay with _cdc_deleted = true).") }}
  {%- endif -%}
  {%- do cfg.update({'delete_handling': delete_handling}) -%}
  {{ return(cfg) }}
{%- endmacro %}
