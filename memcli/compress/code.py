"""Code is never pruned word by word: it is kept byte-exact, or, when long, outlined by a parser.

What people ask of code is in its lines (a default, a return under a condition, a docstring), so code
up to OUTLINE_CHARS stays whole. Longer Python is outlined by Python's own parser: imports and
module-level names, each class and function's signature lines and the first line of its docstring,
every line as the raw has it, with a count of the lines left out between. The raw text stays for
`--raw`. Code in other languages stays whole (no parser of them ships with mem).
"""

from __future__ import annotations

import ast
import textwrap

from memcli.compress import marks

OUTLINE_CHARS = 6000


def compress(text: str, lang: str | None = None) -> str:
    if len(text) < OUTLINE_CHARS or lang not in (None, "python", "py"):
        return text
    rows = text.split("\n")
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError):
        return text
    keep = _outline_rows(tree, rows)
    if not keep:
        return text
    out, left = [], 0
    for i, row in enumerate(rows):
        if i in keep:
            if left:
                out.append(marks.omitted(left, "lines" if left > 1 else "line"))
                left = 0
            out.append(row)
        elif row.strip():
            left += 1
    if left:
        out.append(marks.omitted(left, "lines" if left > 1 else "line"))
    return "\n".join(out)


def _outline_rows(tree: ast.AST, rows: list[str]) -> set[int]:
    keep: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node in getattr(tree, "body", []):
            keep.update(range(node.lineno - 1, node.end_lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node in getattr(tree, "body", []):
            if node.end_lineno - node.lineno < 2:
                keep.update(range(node.lineno - 1, node.end_lineno))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno]) - 1
            body = node.body[0].lineno - 1 if node.body else node.lineno
            keep.update(range(first, max(body, node.lineno)))
            doc = node.body[0] if node.body else None
            if isinstance(doc, ast.Expr) and isinstance(getattr(doc, "value", None), ast.Constant) and isinstance(
                    doc.value.value, str):
                keep.add(doc.lineno - 1)
    return {i for i in keep if 0 <= i < len(rows)}
