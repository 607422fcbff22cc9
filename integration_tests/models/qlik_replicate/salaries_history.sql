{{ config(materialized='cdc_scd2', unique_key=['emp_no', 'from_date'], source_table='employees.salaries', cdc_format='qlik_replicate') }}
select * from {{ ref('cdc_changes') }}
