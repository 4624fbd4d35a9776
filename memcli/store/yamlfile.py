"""mem's YAML: alias-free safe loading for every file mem reads, and the form a memory file is written in
(for people first: keys in a fixed order, the raw prose as a block scalar, compression on one line)."""

from __future__ import annotations

import yaml

from memcli.errors import InvalidMemory

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str):
    """YAML without aliases: `*name` lets a few hundred bytes stand for gigabytes (a "billion laughs",
    through nested aliases or merge keys), and no memory file mem writes uses them. An alias needs a `*`,
    so only a text holding one pays for the look at its events."""
    if "*" in text:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                raise InvalidMemory(f"YAML aliases (*{event.anchor}) are not allowed in mem's files")
    return yaml.load(text, Loader=_Loader)


def parse_yaml(text: str, origin: str):
    """The data of a memory file (or mem.yaml), before it is checked (the gate screens a memory first)."""
    try:
        return load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InvalidMemory(f"{origin}: not valid YAML{where}") from None
    except InvalidMemory as exc:
        raise InvalidMemory(f"{origin}: {exc}") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # PyYAML builds values after parsing: 2020-02-30 is a timestamp it cannot make, a number may have
        # more digits than Python converts, nesting may be deeper than the stack.
        raise InvalidMemory(f"{origin}: a value YAML cannot build ({type(exc).__name__}: {exc})") from None


class _Literal(str):
    pass


class _Quoted(str):
    pass


class _Flow(list):
    pass


class _FlowMap(dict):
    pass


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Literal, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v, style="|"))
_Dumper.add_representer(_Quoted, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v, style="'"))
_Dumper.add_representer(_Flow, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
_Dumper.add_representer(_FlowMap, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))


def dump(data: dict, *, literal: bool) -> str:
    """A memory's fields (Memory.to_dict) as its file: times quoted, lists on one line, the raw text as a
    block scalar where `literal` (one that cannot survive a block scalar is quoted instead)."""
    data = dict(data)
    if data["source"] is None:
        del data["source"]
    data["created_at"] = _Quoted(data["created_at"])
    data["updated_at"] = _Quoted(data["updated_at"])
    data["tags"] = _Flow(data["tags"])
    if "supersedes" in data:
        data["supersedes"] = _Flow(data["supersedes"])
    data["raw"] = _Literal(data["raw"]) if literal else data["raw"]
    if data["compressed"] is not None:
        data["compressed"] = _Quoted(data["compressed"])
    if data["compression"] is not None:
        data["compression"] = _FlowMap(data["compression"])
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 30)
