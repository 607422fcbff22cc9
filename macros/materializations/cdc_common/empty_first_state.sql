{#- A first build (or --full-refresh) whose batch holds no change for this target writes an empty
    table. The state SELECT then plans to an empty relation (the optimizer prunes it before any code
    is generated or any task runs), instead of running every window and join over nothing: most of a
    fresh project's targets start this way. `empty` is the apply's own count of the batch. -#}
{% macro _cdc_state_or_empty(state_sql, empty) -%}
  {%- if empty %}
    select * from (
    {{ state_sql }}
    ) as _cdc_no_changes where false
  {%- else %}
    {{ state_sql }}
  {%- endif %}
{%- endmacro %}
