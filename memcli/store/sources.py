"""A memory's `source`: how a local file is written in it, and how a path a person types finds it.

A file inside the project (the folder around a `.mem/` store, or the store's own folder: `Mem.home`)
is written relative to it with `/`: `docs/setup.md`, and `docs/setup.md#2` for the second chunk that
`mem ingest` made of it. A store committed with the code then names the same file in every clone,
whatever the working directory was. A file elsewhere under the user's home is written `~/notes/x.md`,
any other by its absolute path. Not relative to a git work tree's top when the store is elsewhere
(the user's own store holds many projects: two projects' `README.md#1` would be one source, and a
re-run of `mem ingest` would replace one project's chunks with the other's). URIs and anything else
given as a source are kept as given.

A typed `--source` filter is a path from the working directory, like any path on the command line:
it matches the written form of that path, the chunks of a file (`path#n`) and what lies under a
folder; globs keep working. It also matches the absolute and `~/` forms of the same path (what an
older mem, or `mem add --source /abs/path`, stored), and, unless it names a file or folder that
exists, the text as typed (`thread/*`, a URL, a source written from another folder).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")  # a one-letter "scheme" is a Windows drive: a path
CHUNK = re.compile(r"^(?P<path>.+)#(?P<n>[1-9][0-9]*)$")
_CHUNKS = "#[0-9]*"  # the GLOB of a file's chunk numbers


def written(home: Path, path: Path | str) -> str:
    """How the local `path` (absolute, or relative to the working directory) is written in `source`."""
    absolute = Path(os.path.abspath(os.path.expanduser(path)))
    for base, prefix in ((Path(os.path.abspath(home)), ""), (Path.home(), "~/")):
        try:
            relative = absolute.relative_to(base).as_posix()
        except ValueError:
            continue
        return prefix + relative if relative != "." else prefix.rstrip("/")
    return absolute.as_posix()


def from_typed(home: Path, text: str) -> str:
    """A source given on the command line: a file or folder that exists (with or without a chunk's `#n`)
    in its written form; anything else (a URI, a note of where it came from) as given."""
    if URI.match(text):
        return text
    found = CHUNK.match(text)
    path, number = (found["path"], f"#{found['n']}") if found else (text, "")
    if not os.path.exists(os.path.expanduser(path)):
        return text
    return written(home, path) + number


def globs(typed: str, home: Path | None = None) -> tuple[str, ...]:
    """The GLOBs a typed `--source` stands for (see the module docstring). Without `home` (a caller
    with no working directory of its own, such as MCP) the text is a glob over the written forms, and a
    plain path also matches its chunks."""
    if home is None or URI.match(typed):
        return _with_chunks(typed)
    local = os.path.abspath(os.path.expanduser(typed))
    exists = os.path.exists(local)
    folder = os.path.isdir(local)
    forms = [] if exists else list(_with_chunks(typed))
    names = [written(home, local), Path(local).as_posix(), _tilde(local)]
    for name in dict.fromkeys(filter(None, names)):
        name = glob_escape(name) if exists else name
        forms += (name + "/*",) if folder else _with_chunks(name)
    if folder and written(home, local) == "":  # the project itself: everything written relative to it
        forms.append("*")
    return tuple(dict.fromkeys(forms))


def local_paths(source: str, home: Path | None = None) -> list[str]:
    """The local paths a memory's `source` names, to be checked against the denylist.

    A plain path (`~` expanded) names itself, and `path#3` (a chunk written by `mem ingest`) also
    names `path`; a relative one is read against the working directory and, given `home`, against the
    project it was written for. A `file:` URI names its path. Any other URI (`https://...`,
    `mailto:...`, `urn:...`) names no file mem could read, and none is returned.
    """
    if URI.match(source):
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(source)
        if parts.scheme.lower() != "file":
            return []
        return [unquote(parts.path)] if parts.path else []
    path = os.path.expanduser(source)
    head, hash_sign, number = path.rpartition("#")
    paths = [path, head] if hash_sign and head and number.isdigit() else [path]
    if home is not None:
        paths += [os.path.join(home, p) for p in paths if not os.path.isabs(p)]
    return paths


def glob_escape(text: str) -> str:
    """SQLite GLOB treats * ? [ as wildcards; a bracketed character matches itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _with_chunks(glob: str) -> tuple[str, ...]:
    """A glob, and the chunks of the file it names when it names no chunk itself."""
    return (glob,) if "#" in glob else (glob, glob + _CHUNKS)


def _tilde(absolute: str) -> str | None:
    try:
        return "~/" + Path(absolute).relative_to(Path.home()).as_posix()
    except ValueError:
        return None
