{{ config(materialized='table') }}
select
  'sql' as caller,
  spark_cdc_crc32c('123456789') as crc32c_check,
  spark_cdc_decode_connect_decimal('AdTA', 2) as decimal_check
