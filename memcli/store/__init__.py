"""The files that are the truth: one YAML file per memory, their ids, and the store folder around them."""
