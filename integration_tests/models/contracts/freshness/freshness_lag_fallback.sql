{#- cdc_lag of the YDB sources only, to check cdc_lag_within with explicit arguments and a fallback
    measure (YDB envelopes carry no processing time). -#}
{{ config(materialized='view') }}
select * from {{ ref('cdc_lag') }} where cdc_format = 'ydb'
