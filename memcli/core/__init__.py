"""The library's heart: the facade commands call (mem.py), compression as a write runs it, the default engines, the idle worker."""
