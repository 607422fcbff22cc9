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
    {{ spark_cdc._cdc_image_members(spark_cdc._cdc_canonical_json("case when _op = 'delete' then _before else _after end")) }} as _m
  from batch
  where _op not in ('truncate', 'rebuild')
)

select e.name, {{ spark_cdc._cdc_value_type_agg('e.value') }} as value_type, max(try_element_at(i._hints, e.name)) as hint
from images as i
lateral view explode(i._m) e as name, value
group by e.name
order by e.name
  {%- endset -%}
  {%- set discovered = {} -%}
  {%- set lowered = {} -%}
  {%- set limit = spark_cdc.get_config()['max_inferred_columns'] | int -%}
  {%- for row in run_query(discovered_sql) -%}
    {%- do lowered.setdefault(row[0] | lower, []).append(row[0]) -%}
    {%- do discovered.update({row[0]: spark_cdc._inferred_type(row[1], row[2], cdc_format)}) -%}
  {%- endfor -%}
  {%- if discovered | length > limit -%}
    {% set msg %}
spark_cdc: the changes of model '{{ model['name'] }}' carry {{ discovered | length }} distinct columns, more than var('spark_cdc').max_inferred_columns ({{ limit }}): a target that wide is most likely built from hostile or misrouted messages, and Spark would take very long to plan it.
Fix: list the columns you want with columns=[...] (or except_columns), or raise max_inferred_columns if the table really is that wide.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}

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
    {%- if lowered.get(name, []) | length > 1 -%}
      {% set msg %}
spark_cdc: the changes of model '{{ model['name'] }}' carry columns {{ lowered[name] | join(' and ') }}, which differ only in case; Spark column names are case-insensitive, so one would silently replace the other.
Fix: leave the column out with except_columns (every spelling of it goes), or declare the target's columns in yml (each declared name reads its own spelling from the images).
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

{#- SQL aggregate: the type of image member `member` over the group's rows (schema_of_variant_agg).
    Spark 3.5 has no VARIANT: there members are JSON text, classified by how Spark 4 writes them, and
    merged as schema_of_variant_agg merges (JSON null adds nothing; a bigint with decimals is a
    DECIMAL(20,0); decimals keep their most integer digits and decimals, past 38 digits a DOUBLE;
    any DOUBLE makes numbers DOUBLE; different kinds make VARIANT). Only what _inferred_type reads
    is told apart: objects and arrays are STRING-like there. -#}
{% macro _cdc_value_type_agg(member) -%}
  {%- if spark_cdc._spark3() -%}
  {%- set m = member -%}
  {%- set kind -%}
  case when {{ m }} = 'null' then null
       when {{ m }} in ('true', 'false') then 'BOOLEAN'
       when {{ m }} rlike '^[-0-9]' and {{ m }} rlike 'E' then 'DOUBLE'
       when {{ m }} rlike '^-?[0-9]+$' and try_cast({{ m }} as bigint) is not null then 'BIGINT'
       when {{ m }} rlike '^-?[0-9]' then 'DECIMAL'
       when startswith({{ m }}, '"') then 'STRING'
       else 'OBJECT_OR_ARRAY' end
  {%- endset -%}
  {%- set int_digits = "case when " ~ m ~ " rlike '^-?[0-9]+$' and try_cast(" ~ m ~ " as bigint) is not null then 20 else length(ltrim('0', regexp_extract(" ~ m ~ ", '^-?([0-9]*)', 1))) end" -%}
  {%- set scale = "length(regexp_extract(" ~ m ~ ", '\\.([0-9]*)$', 1))" -%}
  aggregate(
    array(named_struct('kinds', collect_set({{ kind }}),
                       'i', max(case when {{ kind }} in ('BIGINT', 'DECIMAL') then {{ int_digits }} end),
                       's', max(case when {{ kind }} = 'DECIMAL' then {{ scale }} end))),
    cast(null as string),
    (acc, t) -> case
      when size(t.kinds) = 0 then 'VOID'
      when size(t.kinds) = 1 and t.kinds[0] not in ('BIGINT', 'DECIMAL', 'DOUBLE') then t.kinds[0]
      when exists(t.kinds, k -> k not in ('BIGINT', 'DECIMAL', 'DOUBLE')) then 'VARIANT'
      when array_contains(t.kinds, 'DOUBLE') or t.i + t.s > 38 then 'DOUBLE'
      when not array_contains(t.kinds, 'DECIMAL') then 'BIGINT'
      else concat('DECIMAL(', t.i + t.s, ',', t.s, ')') end)
  {%- else -%}
  schema_of_variant_agg({{ member }})
  {%- endif -%}
{%- endmacro %}

{#- The Spark type of a new column: from the format's type hint (JSON text) when it names one, else
    from schema_of_variant_agg over its JSON values. -#}
{% macro _inferred_type(value_type, hint, cdc_format) -%}
  {%- set from_hint = spark_cdc._hint_type(hint, cdc_format) if hint else none -%}
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

{#- The Spark type a format's type hint (JSON text) names, or none: Debezium's and CockroachDB's
    (enriched) Kafka Connect schema, Qlik Replicate's metadata types, YDB's column types (and those
    of var spark_cdc.tables[...].column_types, {"type": "<source type>"}, for any format). -#}
{% macro _hint_type(hint, cdc_format) -%}
  {%- set h = fromjson(hint) if hint is string else {} -%}
  {%- if h is not mapping -%}{{ return(none) }}{%- endif -%}
  {%- if cdc_format in ('debezium', 'cockroachdb') and (h.get('name') or h.get('parameters') is not none) -%}
    {{ return(spark_cdc._debezium_hint_type(hint)) }}
  {%- endif -%}
  {%- set t = (h.get('type') or '') | string | lower | trim -%}
  {%- set m = modules.re.match('^(numeric|decimal)\\s*\\(\\s*(\\d+)\\s*(?:,\\s*(\\d+)\\s*)?\\)$', t) -%}
  {%- if m -%}
    {%- set precision = [m.group(2) | int, 38] | min -%}
    {{ return('decimal(' ~ precision ~ ',' ~ ([(m.group(3) or 0) | int, precision] | min) ~ ')') }}
  {%- endif -%}
  {%- if t == 'numeric' -%}
    {%- set precision = [(h.get('precision') or 38) | int, 38] | min -%}
    {{ return('decimal(' ~ precision ~ ',' ~ ([(h.get('scale') or 0) | int, precision] | min) ~ ')') }}
  {%- endif -%}
  {#- YDB names integers by bits (Int8 is one byte), Qlik Replicate by bytes (INT8 is eight). -#}
  {%- set ydb_integers = {'int8': 'tinyint', 'uint8': 'smallint'} if cdc_format == 'ydb' else {} -%}
  {%- if t in ydb_integers -%}{{ return(ydb_integers[t]) }}{%- endif -%}
  {{ return({
      'int1': 'tinyint', 'int2': 'smallint', 'int4': 'int', 'int8': 'bigint',
      'uint1': 'smallint', 'uint2': 'int', 'uint4': 'bigint', 'uint8': 'decimal(20,0)',
      'int16': 'smallint', 'int32': 'int', 'int64': 'bigint',
      'uint16': 'int', 'uint32': 'bigint', 'uint64': 'decimal(20,0)',
      'real4': 'float', 'real8': 'double', 'float': 'float', 'double': 'double',
      'bool': 'boolean', 'boolean': 'boolean',
      'date': 'date', 'date32': 'date', 'datetime': 'timestamp', 'timestamp': 'timestamp',
      'datetime64': 'timestamp', 'timestamp64': 'timestamp', 'interval': 'bigint', 'interval64': 'bigint',
      'string': ('binary' if cdc_format == 'ydb' else 'string'), 'wstring': 'string', 'clob': 'string',
      'nclob': 'string', 'utf8': 'string', 'json': 'string', 'jsonb': 'string', 'jsondocument': 'string',
      'uuid': 'string', 'time': 'string', 'bytes': 'binary', 'blob': 'binary',
  }.get(t)) }}
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
