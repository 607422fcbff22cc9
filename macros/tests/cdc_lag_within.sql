{#- The latest staging run of every source table has its worst lag within warn_after / error_after:
    warn when only warn_after is exceeded, error when error_after is. -#}
{% test cdc_lag_within(model, warn_after=none, error_after=none, measure=none) %}
  {{ return(adapter.dispatch('test_cdc_lag_within', 'spark_cdc')(model, warn_after, error_after, measure)) }}
{% endtest %}

{% macro default__test_cdc_lag_within(model, warn_after=none, error_after=none, measure=none) %}
  {#- One test, two levels: failures counts the failing rows (one per source over a threshold), and
      the run is an error only when one of them is over error_after. -#}
  {{ config(fail_calc='count(*)', warn_if='>= 1', error_if='>= 1 and max(lag_level_no) >= 2') }}
  {%- set contracts = spark_cdc.get_config()['contracts'] -%}
  {%- set context = spark_cdc._cdc_freshness_test_context('cdc_lag_within', model) -%}
  {%- set warn_after = contracts.get('lag_warn_after') if warn_after is none else warn_after -%}
  {%- set error_after = contracts.get('lag_error_after') if error_after is none else error_after -%}
  {%- set measure = contracts.get('lag_measure') if measure is none else measure -%}
  {%- set fix = "give the test argument (or var('spark_cdc').contracts.lag_warn_after / lag_error_after) as {count: 1, period: hour}, like dbt source freshness." -%}
  {%- set warn_s = spark_cdc._cdc_freshness_duration_seconds(warn_after, context, 'warn_after', fix) -%}
  {%- set error_s = spark_cdc._cdc_freshness_duration_seconds(error_after, context, 'error_after', fix) -%}
  {%- if warn_s is none and error_s is none -%}
    {% set msg %}
spark_cdc: {{ context }}: warn_after and error_after are both none, so the test checks nothing.
Fix: set warn_after and/or error_after on the test (or var('spark_cdc').contracts.lag_warn_after / lag_error_after), or disable the test (config: {enabled: false}).
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}
  {%- set measures = [measure] if measure is string else measure -%}
  {%- set known = ['processing', 'landing', 'load'] -%}
  {%- if measures is string or measures is mapping or measures is not iterable or measures | length == 0
        or (measures | reject('in', known) | list | length) > 0 -%}
    {% set msg %}
spark_cdc: {{ context }}: measure must be one of processing, landing, load, or a list of them tried in order (e.g. [processing, landing]); got '{{ measure }}'.
Fix: set the test argument measure (or var('spark_cdc').contracts.lag_measure).
    {% endset %}
    {{ exceptions.raise_compiler_error(msg | trim) }}
  {%- endif -%}

with latest as (
  select *
  from (
    select l.*, row_number() over (partition by cdc_format, source_table order by cdc_loaded_at desc) as _run_no
    from {{ model }} as l
  ) as r
  where _run_no = 1
),

measured as (
  select
    cdc_format,
    source_table,
    cdc_loaded_at,
    changes,
    {#- The first measure of the list the run has a value for (a later one is an upper bound of an
        earlier one: landing follows processing, loading follows landing). #}
    case
      {%- for m in measures %}
      when {{ spark_cdc.quote_identifier(m ~ '_lag_ms_max') }} is not null then {{ spark_cdc._sql_string(m) }}
      {%- endfor %}
    end as measure,
    coalesce({% for m in measures %}{{ spark_cdc.quote_identifier(m ~ '_lag_ms_max') }}{{ ', ' if not loop.last }}{% endfor %}) as lag_ms
  from latest
),

leveled as (
  select
    m.*,
    case
      {%- if error_s is not none %}
      when m.lag_ms > {{ error_s * 1000 }} then 2
      {%- endif %}
      {%- if warn_s is not none %}
      when m.lag_ms > {{ warn_s * 1000 }} then 1
      {%- endif %}
      else 0
    end as lag_level_no
  from measured as m
)

select
  cdc_format,
  source_table,
  cdc_loaded_at,
  changes,
  measure,
  lag_ms,
  case lag_level_no when 2 then 'error' else 'warn' end as lag_level,
  case lag_level_no when 2 then {{ error_s * 1000 if error_s is not none else 'null' }}
       else {{ warn_s * 1000 if warn_s is not none else 'null' }} end as threshold_ms,
  case lag_level_no when 2 then {{ spark_cdc._sql_string(spark_cdc._cdc_freshness_duration_text('error_after', error_after)) }}
       else {{ spark_cdc._sql_string(spark_cdc._cdc_freshness_duration_text('warn_after', warn_after)) }} end as threshold,
  lag_level_no
from leveled
where lag_level_no > 0
{% endmacro %}
