"""mem: a command-line memory whose memories cost fewer tokens to read."""

__version__ = "0.1.0"
