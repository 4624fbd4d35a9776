"""JSON, YAML, TOML and tables made short without changing a key or a value.

Pretty-printed JSON spends most of its tokens on indentation and spaces: the compact form (no
whitespace between tokens) keeps every key and value exactly, and the guard checks that it parses to
the same value. YAML and TOML are written compactly already and hold comments that matter, so they
stay as they are. A markdown table loses the padding inside its cells and the length of its rulers.
"""

from __future__ import annotations

import json
import re

_CELL_PADDING = re.compile(r"[ \t]*\|[ \t]*")
_RULER = re.compile(r"^\s*\|?(?:\s*:?-+:?\s*\|)+\s*:?-*:?\s*$")


def compress_json(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def same_json(raw: str, form: str) -> bool:
    try:
        return json.loads(form) == json.loads(raw)
    except ValueError:
        return form == raw


def compress_table(text: str) -> str:
    out = []
    for row in text.split("\n"):
        if _RULER.match(row):
            out.append("|".join("-" if cell.strip() else "" for cell in row.split("|")))
        elif row.strip().startswith("|") and row.strip().endswith("|"):
            out.append(_CELL_PADDING.sub("|", row.strip()))
        else:
            out.append(row)
    return "\n".join(out)
