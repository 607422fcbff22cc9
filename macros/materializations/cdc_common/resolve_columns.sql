{#- A target whose model sets columns / except_columns takes its columns from the change images:
    resolve them for this run (spark_cdc.infer_target_columns) from the declared columns, the columns
    the current version stores and the batch, then re-derive what depends on them (SCD2's tracked
    columns) and check partition_by. Updates `cfg` in place. -#}
{% macro _cdc_resolve_columns(cfg, target_relation, state, batch_sql) -%}
  {%- set stored = [] -%}
  {%- if state['version'] is not none and not cfg['full_refresh'] -%}
    {%- set current = spark_cdc._cdc_physical_relation(target_relation, state, cfg) -%}
    {%- for col in adapter.get_columns_in_relation(current) if not (col.name | lower).startswith('_cdc_') -%}
      {%- do stored.append({'name': col.name, 'data_type': col.dtype}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set reserved = (cfg.get('meta_column_names') or {}).values() | list -%}
  {%- set columns = spark_cdc.infer_target_columns(batch_sql, cfg['columns'], stored, cfg['key_columns'],
                      cfg['column_list'], cfg['except_columns'], cfg['cdc_format'], reserved) -%}
  {%- set names = columns | map(attribute='name') | list -%}
  {%- for p in cfg['partition_by'] if p not in names -%}
    {{ exceptions.raise_compiler_error("spark_cdc: partition_by column '" ~ p ~ "' of model '" ~ model['name'] ~ "' is neither declared nor carried by the change images. Fix: declare it in yml, or remove it from partition_by.") }}
  {%- endfor -%}
  {%- do cfg.update({'columns': columns}) -%}
  {%- if 'track_columns' in cfg -%}
    {%- set values = names | reject('in', cfg['key_columns']) | list -%}
    {%- if cfg['track_only'] is not none -%}
      {%- do cfg.update({'track_columns': cfg['track_only'] | select('in', values) | list}) -%}
    {%- else -%}
      {%- do cfg.update({'track_columns': values | reject('in', cfg['track_except']) | list}) -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
