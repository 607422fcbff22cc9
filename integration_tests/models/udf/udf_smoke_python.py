def model(dbt, session):
    dbt.config(materialized="table", submission_method="session")
    return session.sql(
        "select 'python' as caller, spark_cdc_crc32c('123456789') as crc32c_check, "
        "spark_cdc_decode_connect_decimal('CfY=', 2) as decimal_check"
    )
