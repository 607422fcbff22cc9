{{ config(materialized='cdc_scd2', unique_key=['emp_no', 'from_date'], source_table='employees.salaries') }}
select * from {{ ref('cdc_changes') }}
