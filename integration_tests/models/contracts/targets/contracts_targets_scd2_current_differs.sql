{#- Broken: key 3's current version has another name than the SCD1 target's row. -#}
{{ config(materialized='view') }}
select {{ star_except(ref('contracts_targets_scd2_ok'), ['name']) }}, case when id = 3 then 'c?' else name end as name
from {{ ref('contracts_targets_scd2_ok') }}
