"""The package's imports point down only: the rule docs/architecture.md states, checked on the source.

A module may import from its own room, from a room on the same layer, or from any layer below; never from
a layer above. Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

from locations import ROOT

import memcli

PACKAGE = Path(memcli.__file__).parent

# Bottom first; rooms on one line may import each other (no circle among modules is checked below).
LAYERS = [
    ["errors", "__init__"],  # memcli/__init__.py holds the version only
    ["util"],
    ["providers"],
    ["compress"],
    ["config"],
    ["store"],
    ["index", "privacy"],
    ["core"],
    ["features", "threads", "capture"],
    ["mcp", "ui"],
    ["cli"],
    ["entry"],
    ["__main__"],
]
LAYER_OF = {room: level for level, rooms in enumerate(LAYERS) for room in rooms}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imported(path: Path, module: str) -> set[str]:
    """The memcli modules that `path` imports, anywhere in it."""
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    names = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = {f"{target}.{alias.name}" for alias in node.names} & modules
            names.update(submodules or {target})
    return {name for name in names if name in modules and name != module}


def graph() -> dict[str, set[str]]:
    return {module_name(path): imported(path, module_name(path)) for path in PACKAGE.rglob("*.py")}


def test_every_room_of_the_package_has_a_layer():
    assert {room(module) for module in graph()} <= set(LAYER_OF), "a new room: give it its layer in LAYERS"


def test_no_module_imports_from_a_layer_above_its_own():
    upward = sorted(f"{module} -> {target}" for module, targets in graph().items() for target in targets
                    if LAYER_OF[room(target)] > LAYER_OF[room(module)])
    assert upward == []


def test_no_modules_import_each_other_in_a_circle():
    edges = graph()
    state: dict[str, int] = {}
    circles = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges[module]):
            if state.get(target) == 1:
                circles.append(" -> ".join(trail[trail.index(target):] + [target]))
            elif target not in state:
                visit(target, trail + [target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_the_architecture_page_names_every_layer():
    page = (ROOT / "docs" / "architecture.md").read_text()
    assert [room for rooms in LAYERS for room in rooms
            if not room.startswith("__") and f"memcli/{room}" not in page] == []
