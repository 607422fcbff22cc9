{{ config(enabled=spark_cdc.format_enabled('aurora_dsql'), **spark_cdc._package_table_config()) }}
{#- Chunked Aurora DSQL records, reassembled from their buffered fragments once complete and emitted
    once into the canonical stream (or quarantined: fragment_conflict, crc_mismatch, incomplete_chunk). -#}
{{ spark_cdc.reassemble_aurora_dsql_chunks(ref('stg_cdc__aurora_dsql'), this if is_incremental() else none) }}
