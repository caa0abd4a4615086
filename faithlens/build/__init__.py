"""Building the database: ingest of the vendored benchmarks, import of single files, the text
helpers and the sentence-to-source alignment computed at build time."""
