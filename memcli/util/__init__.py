"""Small helpers every layer may use: atomic files, user folders, text input, progress, forked work."""
