{#- The input of contracts_targets_products_by_lsn: cdc_changes with the change's LSN as a column,
    so the target can order by it (sequence_by) and its contract tests can read the same values. -#}
{{ config(materialized='view') }}
select *, cast(seq.s1 as bigint) as change_lsn
from {{ ref('cdc_changes') }}
