{#- The columns of a staged change row, in order: every model format_staging_models names (the
    staging models stg_cdc__<format> and the models a format adds) has exactly these, and
    union_staged reads them. -#}
{% macro _staged_columns() -%}
  {{ return([
      'cdc_format', 'source_table', 'op', 'op_raw', 'key', 'before_key', 'after', 'before',
      'present_columns', 'changed_columns', 'seq', 'commit_ts', 'emitted_at', 'tx_id', 'is_snapshot',
      'type_hints', 'raw_ref', 'ingested_at', 'cdc_loaded_at', 'record_status', 'reason_code',
      'reason_detail', 'raw_value', 'raw_key', 'raw_digest',
  ]) }}
{%- endmacro %}

{#- The lineage columns of a raw row (raw_messages) that every parser passes through to its parsed
    row, in order; stage_changes turns them into raw_ref, raw_value, raw_key and raw_digest. -#}
{% macro _raw_lineage_columns() -%}
  {{ return(['raw_order', 'raw_partition', 'raw_relation', 'raw_digest', 'raw_delivery', 'raw_value', 'raw_key',
             'ingested_at']) }}
{%- endmacro %}

{#- SQL: the select list of a staged change row (_staged_columns, in order). `exprs` maps a column to
    the SQL expression it is selected as; a column not in it is selected by its name, and an
    expression that is that column of some relation (`c.tx_id`) is selected as it is. -#}
{% macro _staged_select_list(exprs) -%}
  {%- set columns = spark_cdc._staged_columns() -%}
  {%- set unknown = exprs.keys() | reject('in', columns) | list -%}
  {%- if unknown -%}
    {{ exceptions.raise_compiler_error("spark_cdc: _staged_select_list: not a staged column: " ~ (unknown | join(', '))) }}
  {%- endif -%}
  {%- for c in columns %}
  {% if c not in exprs or exprs[c] == c %}{{ c }}{% elif (exprs[c] | string).endswith('.' ~ c) and ' ' not in (exprs[c] | string | trim) %}{{ exprs[c] }}{% else %}{{ exprs[c] }} as {{ c }}{% endif %}{{ ',' if not loop.last }}
  {%- endfor %}
{%- endmacro %}

{#- SQL: the lineage columns of row `alias` (_raw_lineage_columns), comma-separated, as each parser's
    parsed row passes them on. -#}
{% macro _raw_lineage_select_list(alias) -%}
  {%- for c in spark_cdc._raw_lineage_columns() %}
    {{ alias }}.{{ c }}{{ ',' if not loop.last }}
  {%- endfor %}
{%- endmacro %}

{#- SQL: the raw_ref of a staged row read from one raw row (columns raw_relation, raw_partition,
    raw_order of a parsed row): the raw row's position, one fragment. -#}
{% macro _staged_raw_ref() -%}
  named_struct(
    'relation', raw_relation,
    'partition', raw_partition,
    'order', raw_order,
    'fragment_count', 1
  )
{%- endmacro %}
