{#- The columns (name, data_type) of a CDC target whose model asks for columns from the change
    images (config `columns='*'`, a `columns` list, or `except_columns`): what the model's yml
    declares, what the target already stores, and what the batch's images carry, in that order.

    - A declared column keeps its data_type; a stored column keeps its stored type (a type never
      changes under a table: declare the column to choose it).
    - A new column's type comes from the change's type hint where the format has one (Debezium's
      inline schema: Connect types and Debezium logical types), else from its JSON values
      (schema_of_variant_agg): integers bigint, other numbers double, true/false boolean, text,
      objects, arrays and mixed values string.
    - New columns appear in the target as they arrive (schema evolution, without a full refresh);
      a column that stops arriving stays, null in later changes; a renamed column appears under its
      new name. New columns are added in name order.
    - `column_list` ('*' or names) and `except_columns` pick columns like AUTO CDC's column_list and
      except_column_list; key columns are always kept. A listed column not seen yet is added when it
      first arrives.
    - `reserved`: names the target writes itself (metadata columns); an image column with such a
      name fails the run, naming the model, the column and the fix.
    Runs one aggregate query over the batch's images. -#}
{% macro infer_target_columns(batch_sql, declared_columns, stored_columns, key_columns, column_list=none, except_columns=none, cdc_format=none, reserved=none) -%}
  {{ return(adapter.dispatch('infer_target_columns', 'spark_cdc')(batch_sql, declared_columns, stored_columns, key_columns, column_list, except_columns, cdc_format, reserved)) }}
{%- endmacro %}

{% macro default__infer_target_columns(batch_sql, declared_columns, stored_columns, key_columns, column_list=none, except_columns=none, cdc_format=none, reserved=none) -%}
  {%- if not execute -%}{{ return(declared_columns) }}{%- endif -%}
  {%- set discovered_sql -%}
with batch as (
  {{ batch_sql }}
),

images as (
  select
    _hints,
    try_variant_get(try_parse_json(case when _op = 'delete' then _before else _after end), '$', 'map<string, variant>') as _m
  from batch
  where _op not in ('truncate', 'rebuild')
)

select e.name, schema_of_variant_agg(e.value) as value_type, max(try_element_at(i._hints, e.name)) as hint
from images as i
lateral view explode(i._m) e as name, value
group by e.name
order by e.name
  {%- endset -%}
  {%- set discovered = {} -%}
  {%- for row in run_query(discovered_sql) -%}
    {%- do discovered.update({row[0]: spark_cdc._inferred_type(row[1], row[2], cdc_format)}) -%}
  {%- endfor -%}

  {%- set by_name = {} -%}
  {%- set ordered = [] -%}
  {%- for c in declared_columns -%}
    {%- do by_name.update({c.name | lower: {'name': c.name, 'data_type': c.data_type}}) -%}
    {%- do ordered.append(c.name | lower) -%}
  {%- endfor -%}
  {%- for c in stored_columns if c.name | lower not in by_name -%}
    {%- do by_name.update({c.name | lower: {'name': c.name, 'data_type': c.data_type}}) -%}
    {%- do ordered.append(c.name | lower) -%}
  {%- endfor -%}
  {%- for name, data_type in discovered.items() -%}
    {%- if name | lower not in by_name -%}
      {%- do by_name.update({name | lower: {'name': name, 'data_type': data_type}}) -%}
      {%- do ordered.append(name | lower) -%}
    {%- elif by_name[name | lower].data_type is none -%}
      {%- do by_name[name | lower].update({'data_type': data_type}) -%}
    {%- endif -%}
  {%- endfor -%}

  {%- set keys = key_columns | map('lower') | list -%}
  {%- set excluded = (except_columns or []) | map('lower') | list -%}
  {%- if column_list is not none and column_list != '*' -%}
    {%- set wanted = column_list | map('lower') | list -%}
    {%- set ordered = wanted + (keys | reject('in', wanted) | list) -%}
  {%- endif -%}

  {%- set result = [] -%}
  {%- for name in ordered if name in by_name and (name in keys or name not in excluded) -%}
    {%- set c = by_name[name] -%}
    {%- if name in ((reserved or []) | map('lower') | list) or name.startswith('_cdc_') -%}
      {% set msg %}
spark_cdc: the changes of model '{{ model['name'] }}' carry a column '{{ c.name }}', a name the target writes itself (its metadata columns and _cdc_*).
Fix: add '{{ c.name }}' to the model's except_columns, or rename the metadata column with meta_column_names.
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
    {%- do result.append({'name': c.name, 'data_type': c.data_type or 'string'}) -%}
  {%- endfor -%}
  {%- for k in key_columns if k | lower not in (result | map(attribute='name') | map('lower') | list) -%}
    {% set msg %}
spark_cdc: unique_key column '{{ k }}' of model '{{ model['name'] }}' is neither declared in its yml nor carried by the change images.
Fix: correct unique_key, or declare '{{ k }}' with its data_type in the model's yml.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endfor -%}
  {{ return(result) }}
{%- endmacro %}

{#- The Spark type of a new column: from the format's type hint (JSON text) when it names one, else
    from schema_of_variant_agg over its JSON values. -#}
{% macro _inferred_type(value_type, hint, cdc_format) -%}
  {%- set from_hint = spark_cdc._debezium_hint_type(hint) if cdc_format == 'debezium' and hint else none -%}
  {%- if from_hint -%}{{ return(from_hint) }}{%- endif -%}
  {%- set t = (value_type or '') | upper -%}
  {%- if t == 'BIGINT' or t == 'INT' or t == 'SMALLINT' or t == 'TINYINT' -%}
    {{ return('bigint') }}
  {%- elif t.startswith('DECIMAL(') and t.endswith(',0)') -%}
    {{ return('bigint' if (t[8:-3] | int) <= 18 else 'decimal(38,0)') }}
  {%- elif t.startswith('DECIMAL(') or t in ('DOUBLE', 'FLOAT') -%}
    {{ return('double') }}
  {%- elif t == 'BOOLEAN' -%}
    {{ return('boolean') }}
  {%- else -%}
    {{ return('string') }}
  {%- endif -%}
{%- endmacro %}

{#- Debezium's inline schema: Connect types and the logical types decode_debezium_value decodes. -#}
{% macro _debezium_hint_type(hint) -%}
  {%- set h = fromjson(hint) if hint is string else {} -%}
  {%- if h is not mapping -%}{{ return(none) }}{%- endif -%}
  {%- set name = h.get('name') or '' -%}
  {%- set params = h.get('parameters') or {} -%}
  {%- if name in ('io.debezium.time.Date', 'org.apache.kafka.connect.data.Date') -%}
    {{ return('date') }}
  {%- elif name in ('io.debezium.time.Timestamp', 'io.debezium.time.MicroTimestamp', 'io.debezium.time.NanoTimestamp',
                    'io.debezium.time.ZonedTimestamp', 'org.apache.kafka.connect.data.Timestamp') -%}
    {{ return('timestamp') }}
  {%- elif name == 'org.apache.kafka.connect.data.Decimal' -%}
    {%- set scale = (params.get('scale') or 0) | int -%}
    {%- set precision = (params.get('connect.decimal.precision') or 38) | int -%}
    {{ return('decimal(' ~ ([[precision, scale] | max, 38] | min) ~ ',' ~ ([scale, 38] | min) ~ ')') }}
  {%- elif name -%}
    {#- Time, VariableScaleDecimal, Json, Uuid, Enum...: kept exactly, as text. #}
    {{ return('string') }}
  {%- endif -%}
  {{ return({'int8': 'tinyint', 'int16': 'smallint', 'int32': 'int', 'int64': 'bigint', 'float32': 'float',
             'float64': 'double', 'boolean': 'boolean', 'bytes': 'binary', 'string': 'string'}.get(h.get('type'))) }}
{%- endmacro %}
