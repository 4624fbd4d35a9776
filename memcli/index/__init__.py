"""Caches beside the files, rebuildable from them: the SQLite catalog, the vector graph, hybrid search."""
