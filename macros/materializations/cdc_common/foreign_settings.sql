{#- Settings that belong to another materialization (cdc_scd2's history options on a cdc_scd1 model,
    dbt's incremental or snapshot options on either) would otherwise be silently ignored: the user
    believes the target behaves one way and it behaves another. Each fails before anything is written,
    with the model, the setting and the fix. `file_format` is the model's resolved file format. -#}
{% macro _cdc_reject_foreign_settings(model, config, materialization, file_format) -%}
  {%- set model_name = model['name'] -%}
  {%- set merge = file_format in spark_cdc._cdc_merge_formats() -%}

  {%- if materialization == 'cdc_scd1' -%}
    {%- for setting in ('track_history_columns', 'track_history_except_columns', 'valid_to_current') if config.get(setting) is not none -%}
      {% set msg %}
spark_cdc: model '{{ model_name }}' (materialized='cdc_scd1') sets {{ setting }}, a cdc_scd2 setting that a current-state table has no use for.
Fix: remove {{ setting }}, or use materialized='cdc_scd2' to keep the history of each key.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endfor -%}
  {%- endif -%}

  {#- dbt's incremental strategies: a CDC target applies its changes itself (versioned rewrites on
      parquet/orc, MERGE INTO on delta/iceberg/hudi). 'merge' on a MERGE format says what we do. -#}
  {%- set strategy = config.get('incremental_strategy') -%}
  {%- if strategy is not none and not (strategy == 'merge' and merge) -%}
    {%- if strategy == 'merge' -%}
      {% set msg %}
spark_cdc: model '{{ model_name }}' ({{ materialization }}) sets incremental_strategy='merge', but file_format='{{ file_format }}' has no MERGE INTO.
Fix: remove incremental_strategy ({{ materialization }} rewrites parquet/orc targets itself, crash-safe), or set file_format='delta' (or 'iceberg', 'hudi') to have changes applied with MERGE INTO.
      {% endset %}
    {%- else -%}
      {% set msg %}
spark_cdc: model '{{ model_name }}' ({{ materialization }}) sets incremental_strategy='{{ strategy }}', a setting of dbt's incremental materialization.
Fix: remove incremental_strategy: {{ materialization }} applies each batch of changes itself (versioned rewrites on parquet/orc, MERGE INTO on delta/iceberg/hudi).
      {% endset %}
    {%- endif -%}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}

  {#- dbt-spark's MERGE-only options. -#}
  {%- for setting in ('merge_update_columns', 'merge_exclude_columns', 'incremental_predicates') if config.get(setting) is not none -%}
    {%- if merge -%}
      {% set reason = materialization ~ " writes its MERGE itself: every change updates the whole row" %}
    {%- else -%}
      {% set reason = "it is an option of MERGE INTO, which file_format='" ~ file_format ~ "' does not have" %}
    {%- endif -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' ({{ materialization }}) sets {{ setting }}, but {{ reason }}.
Fix: remove {{ setting }}; to leave columns out of the target, use except_columns=[...] (or list the target's columns in yml).
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endfor -%}

  {#- dbt snapshot options: versions come from the change stream, not from comparing snapshots. -#}
  {%- for setting in ('strategy', 'updated_at', 'check_cols') if config.get(setting) is not none -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' ({{ materialization }}) sets {{ setting }}, a dbt snapshot setting; {{ materialization }} takes each change's order from the change stream.
Fix: remove {{ setting }}; to order a key's changes by your own column use sequence_by='<column>'{{ ", to choose which columns open a new version use track_history_columns" if materialization == 'cdc_scd2' else "" }}.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endfor -%}
{%- endmacro %}
