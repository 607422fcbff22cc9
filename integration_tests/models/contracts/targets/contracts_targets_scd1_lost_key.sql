{#- Broken: key 4 (last change an update) is missing: a lost change. -#}
{{ config(materialized='view') }}
select * from {{ ref('contracts_targets_scd1_ok') }} where id != 4
