{#- Changes a target cannot apply faithfully are quarantined, never written as something else: a
    value that does not fit its column's declared type (it would become null), a key value that
    cannot be represented (a row without a key), a partition value the storage cannot keep as it is
    (an empty string would read back as null; Hive's default-partition name, U+0000 or a very long
    value cannot name a directory). The batch table records whether each change fails a check
    (`_rejected`, _cdc_batch_rows_sql); each run with changes counts them there (a scan of that
    column). When there are any, they are appended to the target's hidden table `<model>__cdc_rejected`
    (shaped like cdc_quarantine, which lists them), with the checks each fails, and left out of the
    batch. The rest applies. `batch_sql` reads the batch table. The count comes with the other facts
    the run needs about its batch in one query (_cdc_batch_facts); `facts` is its result. -#}
{% macro _cdc_screen_batch(target_relation, cfg, batch_sql, facts) -%}
  {%- set checks = facts['checks'] -%}
  {%- if not checks -%}{{ return(batch_sql) }}{%- endif -%}
  {%- set rejected = spark_cdc._cdc_rejected_relation(target_relation) -%}
  {%- if cfg['full_refresh'] and adapter.get_relation(database=rejected.database, schema=rejected.schema, identifier=rejected.identifier) is not none -%}
    {#- The target is rebuilt from the whole stream: so are its rejects. -#}
    {%- call statement('cdc_rejects') -%}truncate table {{ rejected }}{%- endcall -%}
  {%- endif -%}
  {%- if facts['rejected'] == 0 -%}{{ return(batch_sql) }}{%- endif -%}
  {% do spark_cdc._cdc_create_rejected_table(rejected) %}
  {%- call statement('cdc_rejects') -%}
insert into {{ rejected }}
select
  {{ spark_cdc._sql_string(cfg['cdc_format']) }} as cdc_format,
  {{ spark_cdc._sql_string(cfg['source_table']) }} as source_table,
  r.reason_code,
  concat('model ', {{ spark_cdc._sql_string(model['name']) }}, ': ', r.detail, ' (key ', coalesce(s._k, 'null'), ', seq ', to_json(s._seq), ')') as reason_detail,
  concat('{"op": "', s._op, '", "before": ', coalesce(s._before, 'null'), ', "after": ', coalesce(s._after, 'null'), '}') as raw_value,
  cast(null as string) as raw_key,
  s._raw_ref as raw_ref,
  cast(null as timestamp) as ingested_at,
  current_timestamp() as cdc_loaded_at,
  s._k as key,
  s._seq as seq
from ({{ spark_cdc._cdc_screened_sql(checks, 'select * from (' ~ batch_sql ~ ') as b where b._rejected') }}) as s
lateral view explode(s._rejects) x as r
  {%- endcall -%}
  {{ return('select * from (' ~ batch_sql ~ ') as s where not s._rejected') }}
{%- endmacro %}

{#- The select the batch table is written from (batch_table.sql): the batch's columns and, when the
    target has checks (_cdc_reject_checks), `_rejected`: whether the change fails any (one predicate
    Spark compiles). Each image is parsed once, in the inner select (`_rm`: the image's members,
    `_km`: the key's values as text), which the table does not keep (`_row`: the batch's columns). -#}
{% macro _cdc_batch_rows_sql(cfg, batch_sql) -%}
  {%- set checks = spark_cdc._cdc_reject_checks(cfg) -%}
  {%- if not checks -%}{{ return('select * from (' ~ batch_sql ~ ') as b') }}{%- endif -%}
  {%- set rows -%}
select b._row.*, {{ spark_cdc._cdc_rejected_sql(checks) }} as _rejected
from ({{ spark_cdc._cdc_parsed_images_sql(batch_sql) }}) as b
  {%- endset -%}
  {{ return(rows) }}
{%- endmacro %}

{#- The rejected changes of the batch with `_rejects`, the `checks` (_cdc_reject_checks) each fails
    (an array of reason_code and detail). Only for the rows _cdc_screen_batch inserts: the array is
    built without code generation, per row and check. -#}
{% macro _cdc_screened_sql(checks, batch_sql) -%}
  {%- set screened -%}
select b.*, {{ spark_cdc._cdc_reject_reasons_sql(checks) }} as _rejects
from ({{ spark_cdc._cdc_parsed_images_sql(batch_sql) }}) as b
  {%- endset -%}
  {{ return(screened) }}
{%- endmacro %}

{#- SQL: the batch's rows with `_row` (their columns as one struct), `_rm` and `_km`, which the
    checks read. -#}
{% macro _cdc_parsed_images_sql(batch_sql) -%}
select struct(c.*) as _row, c.*,
  {{ spark_cdc._cdc_image_members("case when c._op = 'delete' then c._before else c._after end") }} as _rm,
  {{ spark_cdc.json_text_map('c._k') }} as _km
from ({{ batch_sql }}) as c
{%- endmacro %}

{#- SQL: the aggregate counting a batch table's rejected changes (alias `s`). -#}
{% macro _cdc_rejects_count() -%}
  count_if(s._rejected)
{%- endmacro %}

{#- SQL boolean: a change fails at least one of `checks` (the same predicates as _rejects, as one
    expression Spark compiles). -#}
{% macro _cdc_rejected_sql(checks) -%}
  ({% for c in checks %}coalesce({{ c.bad }}, false){{ ' or ' if not loop.last }}{% endfor %})
{%- endmacro %}

{#- The rejected-changes tables of the project's CDC targets that exist (cdc_quarantine lists them;
    the on-run-start hook creates those of the selected targets). -#}
{% macro _cdc_rejected_relations() -%}
  {%- set found = [] -%}
  {%- if not execute -%}{{ return(found) }}{%- endif -%}
  {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.config.materialized in ('cdc_scd1', 'cdc_scd2') -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=(node.alias or node.name) ~ '__cdc_rejected') -%}
    {%- if relation is not none %}{% do found.append(relation) %}{% endif -%}
  {%- endfor -%}
  {{ return(found) }}
{%- endmacro %}

{#- The target's table of rejected changes (hidden, `<model>__cdc_rejected`). -#}
{% macro _cdc_rejected_relation(target_relation) -%}
  {{ return(api.Relation.create(database=target_relation.database, schema=target_relation.schema,
                                identifier=target_relation.identifier ~ '__cdc_rejected', type='table')) }}
{%- endmacro %}

{#- Creates the rejected-changes table when it does not exist (the on-run-start hook does so for every
    selected target, so that cdc_quarantine, built earlier in the run, can list it). -#}
{% macro _cdc_create_rejected_table(relation) -%}
  {%- call statement('cdc_rejected_table') -%}
create table if not exists {{ relation }} (
  cdc_format string, source_table string, reason_code string, reason_detail string, raw_value string,
  raw_key string, raw_ref struct<relation: string, `partition`: string, `order`: decimal(38,0), fragment_count: int>,
  ingested_at timestamp, cdc_loaded_at timestamp,
  key string, seq struct<s1: decimal(38,0), s2: decimal(38,0), s3: decimal(38,0)>
) using {{ spark_cdc.get_config()['file_format'] }}
  {%- endcall -%}
{%- endmacro %}

{#- The checks a target's changes must pass, from its columns: [{reason, column, data_type, value,
    bad}] where `value` is the SQL of the decoded value over a batch row with image members `_rm`
    and key values `_km` (_cdc_screened_sql), and `bad` the SQL predicate that rejects it. -#}
{% macro _cdc_reject_checks(cfg) -%}
  {%- set s = spark_cdc._sql_string -%}
  {%- set checks = [] -%}
  {%- for c in cfg['columns'] -%}
    {%- set t = (c.data_type or 'string') | lower | trim -%}
    {%- set is_text = t in ('string', 'text') or t.startswith('varchar') or t.startswith('char') -%}
    {%- set hint = '_hints[' ~ s(c.name) ~ ']' -%}
    {%- if c.name in cfg['key_columns'] -%}
      {%- set text = "try_element_at(_km, " ~ s(c.name) ~ ")" -%}
      {%- set value = spark_cdc.decode_value(text, c.data_type, hint, cfg['cdc_format']) -%}
      {%- do checks.append({'reason': 'unrepresentable_key', 'column': c.name, 'data_type': c.data_type, 'value': value,
            'bad': "_op not in ('truncate', 'rebuild') and (" ~ value ~ ") is null"}) -%}
    {%- else -%}
      {%- set member = '_rm[' ~ s(c.name) ~ ']' -%}
      {%- set value = spark_cdc.decode_value(spark_cdc._cdc_member_text(member, hint, cfg['cdc_format'], c.data_type), c.data_type, hint, cfg['cdc_format']) -%}
      {%- set carried = "_op not in ('delete', 'truncate', 'rebuild') and (_present is null or array_contains(_present, " ~ s(c.name) ~ ")) and " ~ member ~ " is not null and not " ~ spark_cdc._cdc_member_is_null(member) -%}
      {#- A JSON number beyond what a double holds exactly (2^53 and more, or out of range: Spark reads
          it as a double, Infinity past 1.8e308) has lost digits, whatever the column's type. -#}
      {%- set inexact = spark_cdc._cdc_member_inexact(member) -%}
      {%- do checks.append({'reason': 'type_mismatch', 'column': c.name, 'data_type': c.data_type, 'value': value,
            'bad': carried ~ " and (" ~ ("" if is_text else "(" ~ value ~ ") is null or ") ~ inexact ~ ")"}) -%}
    {%- endif -%}
    {%- if c.name in cfg['partition_by'] and is_text -%}
      {%- set part_value = value if c.name in cfg['key_columns'] else value -%}
      {%- do checks.append({'reason': 'unstorable_partition_value', 'column': c.name, 'data_type': c.data_type, 'value': value,
            'bad': "_op not in ('truncate', 'rebuild') and " ~ spark_cdc._cdc_unstorable_partition_value(value)}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(checks) }}
{%- endmacro %}

{#- SQL boolean: image member `member` is a JSON number read as a double beyond 2^53 (or Infinity).
    On Spark 3.5 members are their JSON text, where a double of that size is written with an exponent
    (Java's text: decimals and bigints never carry one). A double past 1.8e308 is written as the
    string "Infinity" there, which text cannot tell from that string: it is not rejected on 3.5. -#}
{% macro _cdc_member_inexact(member) -%}
  {%- if spark_cdc._spark3() -%}
  ({{ member }} rlike '^-?[0-9.]+E' and not abs(cast({{ member }} as double)) < 9007199254740992)
  {%- else -%}
  (schema_of_variant({{ member }}) = 'DOUBLE' and not abs(try_variant_get({{ member }}, '$', 'double')) < 9007199254740992)
  {%- endif -%}
{%- endmacro %}

{#- SQL boolean: a string partition value a Hive-style directory cannot keep as it is: the empty
    string (read back as null), Hive's default-partition name, a character below U+0020 that path
    escaping leaves as it is (U+0000), or a value whose escaped name could pass 255 bytes (each
    character outside [A-Za-z0-9._-] counted as three). -#}
{% macro _cdc_unstorable_partition_value(value_sql) -%}
  coalesce(({{ value_sql }}) = '' or ({{ value_sql }}) = '__HIVE_DEFAULT_PARTITION__' or instr({{ value_sql }}, char(0)) > 0
           or octet_length(regexp_replace({{ value_sql }}, '[^A-Za-z0-9._-]', '___')) > 200, false)
{%- endmacro %}

{#- SQL: array<struct<reason_code, detail>> of the checks a batch row fails (empty: none). -#}
{% macro _cdc_reject_reasons_sql(checks) -%}
  {%- set s = spark_cdc._sql_string -%}
  filter(array(
    {%- for c in checks %}
    case when {{ c.bad }} then named_struct('reason_code', {{ s(c.reason) }}, 'detail',
      concat('column ', {{ s(c.column) }}, ' ({{ c.data_type }})', {{ spark_cdc._cdc_reject_value_detail(c) }})) end{{ ',' if not loop.last }}
    {%- endfor %}
  ), x -> x is not null)
{%- endmacro %}

{#- SQL: what a reject detail says of the value (its text, cut to 80 characters). -#}
{% macro _cdc_reject_value_detail(check) -%}
  {%- set s = spark_cdc._sql_string -%}
  {%- if check.reason == 'unrepresentable_key' -%}
  concat(': key value ', coalesce(substr(try_element_at(_km, {{ s(check.column) }}), 1, 80), 'null'), ' cannot be represented')
  {%- elif check.reason == 'type_mismatch' -%}
  concat(': value ', substr({{ spark_cdc._cdc_member_json('_rm[' ~ s(check.column) ~ ']') }}, 1, 80), ' does not fit the type')
  {%- else -%}
  concat(': partition value ', coalesce(to_json(array(substr({{ check.value }}, 1, 80))), 'null'), ' cannot name a directory as it is')
  {%- endif -%}
{%- endmacro %}
