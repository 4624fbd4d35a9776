"""What commands do on top of the core: versions, tags, edits, import/export, ingest, doctor, status, budgets, savings."""
