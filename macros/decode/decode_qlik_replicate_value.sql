{#- SQL expression: a Qlik Replicate JSON value (text, as from_json(..., 'map<string,string>') gives
    it) as the target column's Spark type. `type_hint_expr` is the column's type hint from the
    metadata message ({"type": "INT4", "length", "precision", "scale"}) or null. Never raises: a value
    that does not fit becomes null. -#}
{% macro decode_qlik_replicate_value(text_expr, data_type, type_hint_expr) -%}
  {{ return(adapter.dispatch('decode_qlik_replicate_value', 'spark_cdc')(text_expr, data_type, type_hint_expr)) }}
{%- endmacro %}

{% macro default__decode_qlik_replicate_value(text_expr, data_type, type_hint_expr) -%}
  {%- set t = data_type | lower | trim -%}
  {%- set v = '(' ~ text_expr ~ ')' -%}
  {%- set qlik_type = "upper(get_json_object(" ~ (type_hint_expr or 'cast(null as string)') ~ ", '$.type'))" -%}
  {%- if t in ('string', 'text') or t.startswith('varchar') or t.startswith('char') -%}
    {#- STRING/WSTRING/CLOB/NCLOB, and TIME or any other type kept as its text. -#}
    {{ v }}
  {%- elif t == 'binary' -%}
    {#- BYTES/BLOB: Replicate's JSON spells bytes as hex; a value that is not hex is read as base64. -#}
    case when {{ v }} rlike '^([0-9A-Fa-f]{2})*$' then unhex({{ v }})
         else try_to_binary({{ v }}, 'base64') end
  {%- elif t == 'boolean' -%}
    {#- BOOLEAN arrives as true/false or as 1/0 (INT1 sources). -#}
    case when lower(trim({{ v }})) in ('true', '1', 't', 'y', 'yes') then true
         when lower(trim({{ v }})) in ('false', '0', 'f', 'n', 'no') then false end
  {%- elif t in ('tinyint', 'smallint', 'int', 'integer', 'bigint', 'byte', 'short', 'long') -%}
    {#- INT1..INT8/UINT1..UINT8, and NUMERIC with scale 0, which some sources (Oracle NUMBER) send as
        text and with a zero fraction ("14", "14.0"). -#}
    coalesce(
      try_cast(trim({{ v }}) as {{ data_type }}),
      case when trim({{ v }}) rlike '^[+-]?[0-9]+[.]0*$'
           then try_cast(regexp_extract(trim({{ v }}), '^([+-]?[0-9]+)', 1) as {{ data_type }}) end)
  {%- elif t.startswith('timestamp') -%}
    {#- DATETIME: "2023-03-21 14:34:21.000000" (or with T), no zone: read in the session time zone;
        a DATE source becomes midnight. -#}
    case when {{ qlik_type }} = 'TIME' then null else try_cast(trim({{ v }}) as {{ data_type }}) end
  {%- elif t == 'date' -%}
    {#- DATE "1993-11-25"; a DATETIME value keeps its date part. -#}
    try_cast(substr(trim({{ v }}), 1, 10) as date)
  {%- else -%}
    {#- NUMERIC -> decimal(p,s), REAL4/REAL8 -> float/double, and anything else: by try_cast. -#}
    try_cast(trim({{ v }}) as {{ data_type }})
  {%- endif -%}
{%- endmacro %}
