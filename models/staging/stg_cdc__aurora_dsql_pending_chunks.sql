{{ config(enabled=spark_cdc.format_enabled('aurora_dsql'), materialized='view') }}
{#- What is still waiting: chunk references of chunked DSQL records not yet emitted, and fragments no
    chunked record references yet, until they are quarantined as incomplete_chunk. -#}
{{ spark_cdc.reassemble_aurora_dsql_chunks(ref('stg_cdc__aurora_dsql'), ref('stg_cdc__aurora_dsql_reassembled'), mode='pending') }}
