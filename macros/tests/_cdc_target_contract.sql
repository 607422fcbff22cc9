{#- Helpers of the target contract tests (scd1_*, scd2_*): the tested target's settings, read from
    its own config in the graph and overridden by the test's arguments, and the consumed change
    stream summarised per key. -#}

{#- The settings a target contract test needs, as a dict: key_columns, source_table, cdc_format,
    delete_handling, truncate_handling, meta (metadata column names), sequence_by, valid_to_current,
    node (the model's graph node, or none), materialization. `overrides` holds the test's arguments
    (none = take the model's config). A model built by the other CDC materialization fails with a
    compile error naming the test, the model, the setting and the fix. -#}
{% macro _cdc_target_contract_settings(test_name, model, materialization, overrides) -%}
  {%- if model is string -%}
    {% set msg %}
spark_cdc: test {{ test_name }} got a filtered model ({{ model | trim }}): it reads the target's config from the graph and checks the whole target, so a `where` config cannot be applied.
Fix: remove `where` from the test's config.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set node = spark_cdc._cdc_target_contract_node(model) if execute else none -%}
  {%- set node_config = node.config if node is not none else {} -%}
  {%- set node_materialization = node_config.get('materialized') -%}
  {%- set model_name = node.name if node is not none else model.identifier -%}
  {%- set is_cdc = node_materialization in ('cdc_scd1', 'cdc_scd2') -%}
  {%- if is_cdc and node_materialization != materialization and overrides.get('argument') -%}
    {% set msg %}
spark_cdc: test {{ test_name }}: argument {{ overrides.get('argument') }} is model '{{ model_name }}', whose materialized is '{{ node_materialization }}'; it must be a {{ materialization }} target.
Fix: pass {{ overrides.get('argument') }}=ref('<a {{ materialization }} model of the same source table>').
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- elif is_cdc and node_materialization != materialization -%}
    {% set msg %}
spark_cdc: test {{ test_name }} is attached to model '{{ model_name }}', whose materialized is '{{ node_materialization }}'; {{ test_name }} checks {{ materialization }} targets only.
Fix: attach the {{ 'scd2_' if node_materialization == 'cdc_scd2' else 'scd1_' }}* contract tests to this model instead (see docs/contracts/targets.md), or move {{ test_name }} to a {{ materialization }} model.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}

  {%- set defaults = spark_cdc._scd1_default_meta_column_names() if materialization == 'cdc_scd1' else spark_cdc._scd2_default_meta_column_names() -%}
  {%- set meta = {} -%}
  {%- do meta.update(defaults) -%}
  {%- set given_meta = overrides.get('meta_column_names') if overrides.get('meta_column_names') is not none else (node_config.get('meta_column_names') or {}) -%}
  {%- if given_meta is not mapping -%}
    {{ exceptions.raise_compiler_error("spark_cdc: test " ~ test_name ~ " on model '" ~ model_name ~ "': meta_column_names must be a mapping. Fix: give a dict whose keys are among " ~ (defaults.keys() | list | join(', ')) ~ ".") }}
  {%- endif -%}
  {%- for k, v in given_meta.items() -%}
    {%- if k not in defaults -%}
      {{ exceptions.raise_compiler_error("spark_cdc: test " ~ test_name ~ " on model '" ~ model_name ~ "': meta_column_names has an unknown key '" ~ k ~ "'. Fix: use only these keys: " ~ (defaults.keys() | list | join(', ')) ~ ".") }}
    {%- endif -%}
    {%- do meta.update({k: v}) -%}
  {%- endfor -%}

  {%- set unique_key = overrides.get('unique_key') or node_config.get('unique_key') -%}
  {#- A target without unique_key keys by its source table's configured primary_key. -#}
  {%- set source_table = overrides.get('source_table') or node_config.get('source_table') -%}
  {%- if not unique_key and is_cdc and source_table -%}
    {%- set unique_key = spark_cdc.table_config(source_table).get('primary_key') -%}
  {%- endif -%}
  {%- if execute and not unique_key -%}
    {% set msg %}
spark_cdc: test {{ test_name }} on model '{{ model_name }}' has no key: the model sets no unique_key{{ '' if is_cdc else " (it is not a cdc_scd1/cdc_scd2 model)" }}.
Fix: pass the test's argument unique_key (a column name or a list of them), or configure var('spark_cdc').tables['<source_table>'].primary_key.
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set key_columns = [unique_key] if unique_key is string else (unique_key or []) -%}

  {%- set cdc_format = overrides.get('cdc_format') or node_config.get('cdc_format') -%}
  {%- if cdc_format is none and is_cdc and spark_cdc.enabled_formats() | length == 1 -%}
    {%- set cdc_format = spark_cdc.enabled_formats()[0] -%}
  {%- endif -%}
  {%- set sequence_by = overrides.get('sequence_by') if overrides.get('sequence_by') is not none else node_config.get('sequence_by') -%}
  {%- set sequence_by = [sequence_by] if sequence_by is string else (sequence_by or []) -%}
  {%- set default_delete = 'remove' if materialization == 'cdc_scd1' else 'new_record' -%}
  {%- set delete_handling = overrides.get('delete_handling') or node_config.get('delete_handling') or default_delete -%}
  {%- set allowed = ('remove', 'flag') if materialization == 'cdc_scd1' else ('new_record', 'invalidate') -%}
  {%- if delete_handling not in allowed -%}
    {{ exceptions.raise_compiler_error("spark_cdc: test " ~ test_name ~ " on model '" ~ model_name ~ "': delete_handling='" ~ delete_handling ~ "' is not a " ~ materialization ~ " setting. Fix: use " ~ (allowed | join(' or ')) ~ ".") }}
  {%- endif -%}
  {%- set truncate_handling = overrides.get('truncate_handling') or node_config.get('truncate_handling') or 'apply' -%}
  {%- if truncate_handling not in ('apply', 'ignore') -%}
    {{ exceptions.raise_compiler_error("spark_cdc: test " ~ test_name ~ " on model '" ~ model_name ~ "': truncate_handling='" ~ truncate_handling ~ "'. Fix: use 'apply' or 'ignore'.") }}
  {%- endif -%}
  {{ return({
      'test_name': test_name,
      'model_name': model_name,
      'node': node,
      'is_cdc': is_cdc,
      'key_columns': key_columns,
      'source_table': overrides.get('source_table') or node_config.get('source_table'),
      'cdc_format': cdc_format,
      'delete_handling': delete_handling,
      'truncate_handling': truncate_handling,
      'meta': meta,
      'sequence_by': sequence_by,
      'valid_to_current': overrides.get('valid_to_current') or node_config.get('valid_to_current'),
  }) }}
{%- endmacro %}

{#- The graph node (model, seed or snapshot) whose relation is `relation`, or none. -#}
{% macro _cdc_target_contract_node(relation) -%}
  {%- for node in graph.nodes.values() if node.resource_type in ('model', 'seed', 'snapshot') -%}
    {%- if (node.alias or node.name) | lower == relation.identifier | lower and (node.schema or '') | lower == (relation.schema or '') | lower -%}
      {{ return(node) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{%- endmacro %}

{#- SQL predicate on cdc_loaded_at: the changes the target has consumed. A target view records its
    watermark in TBLPROPERTIES spark_cdc.consumed_through (empty when it has consumed nothing); a
    relation without the property (a hand-made fixture) is compared with every change. -#}
{% macro _cdc_target_contract_consumed(relation) -%}
  {%- if not execute or not spark_cdc._cdc_target_contract_exists(relation) -%}{{ return('true') }}{%- endif -%}
  {%- set props = spark_cdc._cdc_tblproperties(relation) -%}
  {%- if 'spark_cdc.consumed_through' not in props -%}{{ return('true') }}{%- endif -%}
  {%- set consumed = props['spark_cdc.consumed_through'] -%}
  {{ return('cdc_loaded_at <= timestamp ' ~ spark_cdc._sql_string(consumed) if consumed else 'false') }}
{%- endmacro %}

{#- The target's rejected-changes table (see _cdc_screen_batch), or none when it has none. -#}
{% macro _cdc_target_contract_rejected(relation) -%}
  {%- if not execute -%}{{ return(none) }}{%- endif -%}
  {{ return(adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier ~ '__cdc_rejected')) }}
{%- endmacro %}

{#- True when `relation` exists in the catalog. -#}
{% macro _cdc_target_contract_exists(relation) -%}
  {{ return(adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier) is not none) }}
{%- endmacro %}

{#- The Spark types of `columns` in `relation`, by lower-cased name; a column it lacks fails naming
    the test, the model, the argument and the fix. -#}
{% macro _cdc_target_contract_types(s, relation, columns, argument) -%}
  {%- set types = {} -%}
  {%- if not execute -%}
    {%- for c in columns -%}{%- do types.update({c | lower: 'string'}) -%}{%- endfor -%}
    {{ return(types) }}
  {%- endif -%}
  {%- set found = {} -%}
  {%- for col in adapter.get_columns_in_relation(relation) -%}{%- do found.update({col.name | lower: col.dtype}) -%}{%- endfor -%}
  {%- if not found -%}
    {#- Not built yet: `dbt compile` and `dbt docs generate` must work on a fresh project, so the
        test compiles; running it fails in Spark, naming the missing table. -#}
    {%- for c in columns -%}{%- do types.update({c | lower: 'string'}) -%}{%- endfor -%}
    {{ return(types) }}
  {%- endif -%}
  {%- for c in columns -%}
    {%- if c | lower not in found -%}
      {% set msg %}
spark_cdc: test {{ s['test_name'] }} on model '{{ s['model_name'] }}': column '{{ c }}' ({{ argument }}) is not a column of {{ relation }} (columns: {{ found.keys() | list | join(', ') }}).
Fix: correct the test's argument {{ argument }} (or the model's config it defaults from).
      {% endset %}
      {{ exceptions.raise_compiler_error(msg | trim) }}
    {%- endif -%}
    {%- do types.update({c | lower: found[c | lower]}) -%}
  {%- endfor -%}
  {{ return(types) }}
{%- endmacro %}

{#- SQL expression of the sequence the target orders changes by, over a change relation: the
    canonical `seq`, or for a sequence_by target the struct built from its sequence_by columns the
    way the materialization builds it (so it is what the target stores in its seq column). Those
    columns live in the target model's output, not in cdc_changes: `changes` must carry them. -#}
{% macro _cdc_target_contract_seq_expr(s, changes) -%}
  {%- if not s['sequence_by'] or not execute -%}{{ return('seq') }}{%- endif -%}
  {%- set names = [] -%}
  {%- for col in adapter.get_columns_in_relation(changes) -%}{%- do names.append(col.name | lower) -%}{%- endfor -%}
  {%- set missing = s['sequence_by'] | reject('in', names) | list -%}
  {%- if missing -%}
    {% set msg %}
spark_cdc: test {{ s['test_name'] }} on model '{{ s['model_name'] }}': the model orders changes by sequence_by ({{ s['sequence_by'] | join(', ') }}), so its seq column holds those values, but the change relation {{ changes }} has no column {{ missing | join(', ') }}; comparing with the canonical seq would be wrong.
Fix: pass the test's argument changes= a model that selects the target's input with the sequence_by columns (e.g. a view with the target model's SQL).
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {{ return(spark_cdc._cdc_sequence_by_expr(changes, s['sequence_by'])) }}
{%- endmacro %}

{#- CTEs (ending with a comma) summarising, per key, the changes of the target's source table the
    target has consumed: `_cdc_contract_stream` has the decoded key columns (named as in the target),
    `_k` (canonical key), `_last_ord`/`_last_seq` (the key's latest change), `_last_op`, `_gone` (the
    key does not exist after its latest change: a delete, or a truncate the target applies at or after
    it), `_live` (it exists: its latest change is an upsert and no applied truncate followed) and
    `_expected_ord`/`_expected_seq` (what an SCD1 target stores: the latest change's sequence, or for a
    key ended by a truncate, that truncate's). Two changes at the latest sequence that disagree on
    deleting (a sequence_by tie across runs) leave `_gone`/`_live`/`_expected_*` undecided (false/null). -#}
{% macro _cdc_target_contract_stream_ctes(s, model, changes) -%}
  {%- set seq_expr = spark_cdc._cdc_target_contract_seq_expr(s, changes) -%}
  {%- set types = spark_cdc._cdc_target_contract_types(s, model, s['key_columns'], 'unique_key') %}
{%- set rejected = spark_cdc._cdc_target_contract_rejected(model) %}
_cdc_contract_changes as (
  select key as _k, {{ seq_expr }} as _seq, {{ spark_cdc.change_order_key(seq_expr) }} as _ord, op as _op, {{ spark_cdc._cdc_with_configured_hints('type_hints', 'source_table') }} as _hints
  from {{ changes }}
  {%- if rejected is not none %}
  {#- Changes the target quarantined (its __cdc_rejected table) are not its to apply. #}
  left anti join (select key as _rejected_key, seq as _rejected_seq from {{ rejected }}) as _r
    on key <=> _r._rejected_key and {{ seq_expr }} <=> _r._rejected_seq
  {%- endif %}
  where {{ spark_cdc._cdc_batch_filter(s['source_table'], s['cdc_format'], s['truncate_handling'] == 'apply') }}
    and {{ spark_cdc._cdc_target_contract_consumed(model) }}
),

_cdc_contract_truncates as (
  select coalesce(sort_array(collect_set(struct(_ord, _seq))), array()) as ts
  from _cdc_contract_changes
  where _op = 'truncate'
),

{#- Per key, in one aggregation: the latest sequence, and whether a delete / a non-delete is among
    the changes at it (max over (ord, flag) structs). -#}
_cdc_contract_keys as (
  select
    _k,
    max(_ord) as _last_ord,
    max_by(_seq, _ord) as _last_seq,
    max_by(_op, _ord) as _max_op,
    max_by(_hints, _ord) as _hints,
    max(struct(_ord, _op = 'delete' as _flag))._flag as _any_delete,
    not max(struct(_ord, _op != 'delete' as _flag))._flag as _all_delete
  from _cdc_contract_changes
  where _op not in ('truncate', 'key_only') and _k is not null
  group by _k
),

_cdc_contract_stream as (
  select
    {%- for c in s['key_columns'] %}
    {{ spark_cdc.decode_value("try_element_at(" ~ spark_cdc.json_text_map('k._k') ~ ", " ~ spark_cdc._sql_string(c) ~ ")", types[c | lower], 'try_element_at(k._hints, ' ~ spark_cdc._sql_string(c) ~ ')', s['cdc_format']) }} as {{ spark_cdc.quote_identifier(c) }},
    {%- endfor %}
    k._k,
    k._last_ord,
    k._last_seq,
    case when k._all_delete then 'delete' when tr._ord is not null then 'truncate' else k._max_op end as _last_op,
    k._all_delete or tr._ord is not null as _gone,
    not k._any_delete and tr._ord is null as _live,
    case when tr._ord is null or k._all_delete then k._last_ord when not k._any_delete then tr._ord end as _expected_ord,
    case when tr._ord is null or k._all_delete then k._last_seq when not k._any_delete then tr._seq end as _expected_seq
  from (
    select k.*, try_element_at(filter(t.ts, x -> x._ord >= k._last_ord), 1) as tr
    from _cdc_contract_keys as k
    cross join _cdc_contract_truncates as t
  ) as k
),
{%- endmacro %}

{#- Null-safe join condition on the key columns between aliases `left` and `right`. -#}
{% macro _cdc_target_contract_key_join(s, left, right) -%}
  {%- for c in s['key_columns'] -%}
    {{ left }}.{{ spark_cdc.quote_identifier(c) }} <=> {{ right }}.{{ spark_cdc.quote_identifier(c) }}{{ ' and ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}

{#- The key columns, quoted, each prefixed with `alias.`, comma separated. -#}
{% macro _cdc_target_contract_keys(s, alias=none) -%}
  {%- for c in s['key_columns'] -%}
    {{ alias ~ '.' if alias }}{{ spark_cdc.quote_identifier(c) }}{{ ', ' if not loop.last }}
  {%- endfor -%}
{%- endmacro %}

{#- The changes relation of a stream test: the argument, or spark_cdc's cdc_changes. ref() is called
    at parse time too, so the test depends on cdc_changes. -#}
{% macro _cdc_target_contract_changes(changes) -%}
  {{ return(changes if changes is not none else ref('cdc_changes')) }}
{%- endmacro %}
