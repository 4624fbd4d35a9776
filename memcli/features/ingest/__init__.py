"""`mem ingest`: files and folders into memories, chunk by chunk, kept in step with the files."""
