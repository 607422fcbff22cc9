{#- Settings every CDC target shares (cdc_scd1, cdc_scd2), validated before anything is written and
    returned normalised: unique_key, declared columns with data_type, file_format, partition_by,
    cdc_format, source_table, truncate_handling, sequence_by. Every error names the model, the setting and the fix. -#}
{% macro _cdc_validate_target(model, config, materialization) -%}
  {%- set model_name = model['name'] -%}
  {%- set key_columns = spark_cdc._cdc_target_key(model_name, materialization, config.get('unique_key'), config.get('source_table')) -%}

  {#- columns / except_columns (AUTO CDC's column_list / except_column_list): take the target's
      columns from the change images (spark_cdc.infer_target_columns) instead of only the yml. -#}
  {%- set column_list = config.get('columns') -%}
  {%- set except_columns = config.get('except_columns') -%}
  {%- set except_columns = [except_columns] if except_columns is string else except_columns -%}
  {%- if column_list is not none and except_columns is not none -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' sets both columns and except_columns.
Fix: keep one: columns='*' (or a list of names) takes columns from the change images, except_columns takes every image column but those listed.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- if column_list is not none and column_list != '*' and (column_list is string or column_list is not iterable or column_list is mapping) -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' sets columns={{ column_list }}.
Fix: use columns='*' (every column the change images carry) or a list of column names.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- for k in key_columns if k in (except_columns or []) -%}
    {{ exceptions.raise_compiler_error("spark_cdc: except_columns of model '" ~ model_name ~ "' lists the unique_key column '" ~ k ~ "'. Fix: remove it from except_columns; key columns are always kept.") }}
  {%- endfor -%}
  {%- set infer_columns = column_list is not none or except_columns is not none -%}
  {#- Declared columns without a data_type take the type the envelope gives them (Debezium and
      CockroachDB schemas, Qlik metadata, YDB column types, tables.<t>.column_types), else their JSON
      values': the declared columns, typed from the images. -#}
  {%- set untyped = model['columns'].values() | rejectattr('data_type') | list -%}
  {%- if untyped and not infer_columns -%}
    {%- set infer_columns = true -%}
    {%- set column_list = model['columns'].values() | map(attribute='name') | list -%}
  {%- endif -%}

  {%- set columns = [] -%}
  {%- for name, col in model['columns'].items() -%}
    {% do spark_cdc._cdc_check_data_type(model_name, col.get('name', name), col.get('data_type')) %}
    {% do spark_cdc._cdc_check_type_available(model_name, col.get('name', name), col.get('data_type')) %}
    {%- do columns.append({'name': col.get('name', name), 'data_type': col.get('data_type') or none}) -%}
  {%- endfor -%}
  {%- if not columns and not infer_columns -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' (materialized='{{ materialization }}') declares no columns.
Fix: list the target columns with their data_type under the model's `columns:` in yml, or set columns='*' to take them from the change images.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set column_names = columns | map(attribute='name') | list -%}
  {%- for k in key_columns if k not in column_names and not infer_columns -%}
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

  {% do spark_cdc._cdc_reject_foreign_settings(model, config, materialization, file_format) %}

  {%- set partition_by = config.get('partition_by') -%}
  {%- set partition_by = [partition_by] if partition_by is string else (partition_by or []) -%}
  {%- for p in partition_by if p not in column_names and not infer_columns -%}
    {{ exceptions.raise_compiler_error("spark_cdc: partition_by column '" ~ p ~ "' of model '" ~ model_name ~ "' is not a declared column. Fix: declare it in yml or remove it from partition_by.") }}
  {%- endfor -%}

  {%- set tblproperties = spark_cdc._cdc_validate_tblproperties(model_name, materialization, config.get('tblproperties')) -%}

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

  {%- set truncate_handling = config.get('truncate_handling', 'apply') -%}
  {%- if truncate_handling not in ('apply', 'ignore') -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' (materialized='{{ materialization }}') sets truncate_handling='{{ truncate_handling }}'.
Fix: use 'apply' (a truncate deletes every key whose last change is older; the default) or 'ignore' (truncates of the source table are not applied, like AUTO CDC without apply_as_truncates).
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}

  {#- sequence_by: columns of the model's output that order a key's changes instead of the
      canonical seq (types are checked when the batch is read, see cdc_batch_sql). -#}
  {%- set sequence_by = config.get('sequence_by') -%}
  {%- set sequence_by = [sequence_by] if sequence_by is string else (sequence_by or []) -%}
  {%- if sequence_by | length > 3 or sequence_by | reject('string') | list -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' sets sequence_by={{ sequence_by }}, which is not one to three column names.
Fix: name the column(s) of the model's output that order a key's changes, most significant first (integer, decimal(p,0), date or timestamp), e.g. sequence_by=['updated_at', 'event_id']; or remove it to order by the canonical seq.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}

  {#- The target keeps hidden tables named `<alias>__cdc_<role>` beside it (versions, state,
      partitions, a run's work tables), which its runs create, replace and drop: another node of
      the project materialized under such a name in the same schema would be overwritten. -#}
  {%- if execute -%}
    {%- set hidden_prefix = (model['alias'] ~ '__cdc_') | lower -%}
    {%- for node in graph.nodes.values()
          if node.resource_type in ('model', 'seed', 'snapshot')
          and node.unique_id != model['unique_id']
          and (node.schema or '') | lower == (model['schema'] or '') | lower
          and ((node.alias or node.name) | lower).startswith(hidden_prefix) -%}
      {% set msg %}
spark_cdc: model '{{ model_name }}' ({{ materialization }}) keeps hidden tables named '{{ model['alias'] }}__cdc_*' in schema '{{ model['schema'] }}', and {{ node.resource_type }} '{{ node.name }}' ({{ node.unique_id }}) is materialized as '{{ node.alias or node.name }}' there: the target's runs would replace or drop it.
Fix: rename '{{ node.name }}' or give it another alias (config(alias=...)) or schema; or give '{{ model_name }}' another alias.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endfor -%}
  {%- endif -%}

  {{ return({
      'materialization': materialization,
      'infer_columns': infer_columns,
      'column_list': column_list,
      'except_columns': except_columns,
      'truncate_handling': truncate_handling,
      'sequence_by': sequence_by,
      'cdc_format': cdc_format,
      'key_columns': key_columns,
      'columns': columns,
      'source_table': config.get('source_table'),
      'file_format': file_format,
      'partition_by': partition_by,
      'tblproperties': tblproperties,
  }) }}
{%- endmacro %}

{#- A target's primary-key columns: unique_key, else the primary_key configured for its source table
    (var spark_cdc.tables), so a table's key is written in one place; both given must name the same
    columns, since staging builds each change's key from the table's primary_key. -#}
{% macro _cdc_target_key(model_name, materialization, unique_key, source_table) -%}
  {%- set table_key = (spark_cdc.table_config(source_table).get('primary_key') if source_table else none) -%}
  {%- set table_key = [table_key] if table_key is string else table_key -%}
  {%- if not unique_key and table_key -%}
    {{ return(table_key | list) }}
  {%- elif not unique_key -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' (materialized='{{ materialization }}') has no unique_key{{ " and its source_table '" ~ source_table ~ "' has no primary_key in var('spark_cdc').tables" if source_table else '' }}.
Fix: configure the table's key once, var('spark_cdc').tables['<schema.table>'].primary_key (and source_table='<schema.table>' on the model), or add config(unique_key='id') (or a list, e.g. ['order_id', 'item_id']).
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set key_columns = [unique_key] if unique_key is string else (unique_key | list) -%}
  {%- if table_key and (key_columns | map('lower') | sort | list) != (table_key | map('lower') | sort | list) -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' sets unique_key={{ key_columns }}, but var('spark_cdc').tables['{{ source_table }}'].primary_key is {{ table_key | list }}: staging keys the table's changes by the latter, so the target would not match them.
Fix: keep the key in one place: remove unique_key from the model (it defaults to the table's primary_key), or correct one of the two.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {{ return(key_columns) }}
{%- endmacro %}

{#- A declared data_type must exist on this run's Spark: Spark 3.5 has no VARIANT type. Checked when
    the model runs, so only that model fails. -#}
{% macro _cdc_check_type_available(model_name, column, data_type) -%}
  {%- if data_type is none or 'variant' not in (data_type | string | lower) or not spark_cdc._spark3() -%}{{ return(none) }}{%- endif -%}
  {% set msg %}
spark_cdc: column '{{ column }}' of model '{{ model_name }}' has data_type '{{ data_type }}', but Spark {{ spark_cdc._spark_version() | join('.') }} has no VARIANT type (Spark 4.0 added it).
Fix: declare the column as string (it then holds the value's JSON text), or run the model on Spark 4.
  {% endset %}
  {{ exceptions.raise_compiler_error(msg | trim) }}
{%- endmacro %}

{#- A declared data_type must be a Spark type: letters, digits and underscores with balanced
    parameters in () or <> (decimal(28,6), array<struct<a:int>>). A YAML flow mapping
    ({name: x, data_type: decimal(28,6)}) ends the value at the comma, leaving 'decimal(28'. -#}
{% macro _cdc_check_data_type(model_name, column, data_type) -%}
  {%- if data_type is none or data_type == '' -%}{{ return(none) }}{%- endif -%}
  {%- set text = data_type | string -%}
  {%- set shape_ok = modules.re.match('^[A-Za-z][A-Za-z0-9_ ]*([(<][A-Za-z0-9_ ,:<>()`]*[)>])?$', text | trim) is not none -%}
  {%- set balanced = text.count('(') == text.count(')') and text.count('<') == text.count('>') -%}
  {%- if not (shape_ok and balanced) -%}
    {% set msg %}
spark_cdc: column '{{ column }}' of model '{{ model_name }}' has data_type '{{ text }}', which is not a Spark type{{ ' (its brackets do not balance)' if not balanced else '' }}.
Fix: give a Spark type such as bigint, decimal(28,6) or array<string>. In a YAML flow mapping a comma ends the value: write {name: {{ column }}, data_type: "decimal(28,6)"} (quoted), or use a block mapping.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
{%- endmacro %}

{#- dbt-spark's `tblproperties` config: a mapping of table property names to values, set on the
    target's physical tables (the MERGE state table, the partitioned table, each version table), e.g.
    delta.enableChangeDataFeed or Iceberg's write.merge.mode. `spark_cdc.*` names are the package's
    own (the target view's). Returns {name: value text}. -#}
{% macro _cdc_validate_tblproperties(model_name, materialization, value) -%}
  {%- if value is none -%}{{ return({}) }}{%- endif -%}
  {%- set bad = [] -%}
  {%- if value is not mapping -%}
    {%- do bad.append(value) -%}
  {%- else -%}
    {%- for k, v in value.items()
          if k is not string or (k | lower).startswith('spark_cdc.') or v is none or v is mapping
             or (v is iterable and v is not string) -%}
      {%- do bad.append(k) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if bad -%}
    {% set msg %}
spark_cdc: model '{{ model_name }}' ({{ materialization }}) sets tblproperties={{ value }}: {{ 'not a mapping' if value is not mapping else 'property ' ~ bad | join(', ') ~ ' is not a name with one value, or is a spark_cdc.* property (the package keeps those on the target view)' }}.
Fix: give a mapping of property names to values, e.g. tblproperties={'delta.enableChangeDataFeed': 'true'}, without spark_cdc.* names.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set props = {} -%}
  {%- for k, v in value.items() -%}
    {%- do props.update({k: (v | string | lower) if v is sameas true or v is sameas false else (v | string)}) -%}
  {%- endfor -%}
  {{ return(props) }}
{%- endmacro %}
