{#- The select list of `select * except (...)` (Spark 4 syntax only, so the fixtures run on Spark 3.5
    too): every column of `relation` but `excluded`, quoted, in table order. -#}
{% macro star_except(relation, excluded) -%}
  {%- set names = [] -%}
  {%- for c in adapter.get_columns_in_relation(relation) if c.name not in excluded -%}
    {%- do names.append(spark_cdc.quote_identifier(c.name)) -%}
  {%- endfor -%}
  {{ names | join(', ') if execute else '*' }}
{%- endmacro %}
