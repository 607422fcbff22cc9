{#- Broken: key 1 has two rows. -#}
{{ config(materialized='view') }}
select * from {{ ref('contracts_targets_scd1_ok') }}
union all
select * from {{ ref('contracts_targets_scd1_ok') }} where id = 1
