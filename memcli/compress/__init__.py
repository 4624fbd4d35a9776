"""Compression on write: the pipeline, its methods (prune, facts), the guard and the protected spans."""
