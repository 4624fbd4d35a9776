"""Files that only this machine's mem may have written: the work queue (`.queue/`) and the capture state
(`.capture/`) of a store.

A store's folder may be a clone of a repository anyone could have committed files into, and these two
folders decide what runs and what an assistant is handed. So every file mem writes there carries a seal:
an HMAC-SHA256 of its content under a key kept in the user's config folder (`machine.key`, owner-only,
never in a store). A file whose seal is missing or wrong (committed, copied from another machine, edited
by hand) is not read: a job is set aside, a session's state or the digest is ignored. No file there is
followed through a symlink, read or written: a committed link to `~/.bash_profile` or `/proc/self/environ`
is refused (O_NOFOLLOW), and a folder that is a link, or not this user's, is not used at all.

Standard library only: the hook uses it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from pathlib import Path

SEAL = b"\n#mem-seal "
KEY_FILE = "machine.key"
MAX_BYTES = 64 << 20  # a file of the queue or the capture state larger than this is not read

_keys: dict[str, bytes] = {}


class NotOurs(OSError):
    """A folder or file that this machine's mem did not make (a link, another user's, no valid seal)."""


def key() -> bytes:
    """This user's sealing key, made on first use (owner-only, in the config folder, never in a store)."""
    folder = os.environ.get("MEM_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".config", "mem")
    path = os.path.join(folder, KEY_FILE)
    if path not in _keys:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(os.urandom(32).hex().encode())
        except FileExistsError:
            pass
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            value = handle.read().strip()
        if len(value) < 32:  # written half by a process killed meanwhile: make it again
            os.unlink(path)
            return key()
        _keys[path] = value
    return _keys[path]


def sealed(data: bytes) -> bytes:
    return data + SEAL + hmac.new(key(), data, hashlib.sha256).hexdigest().encode()


def unsealed(raw: bytes) -> bytes | None:
    """The content of a sealed file, or None when its seal is missing or not this machine's."""
    at = raw.rfind(SEAL)
    if at < 0:
        return None
    data, mac = raw[:at], raw[at + len(SEAL):].strip()
    return data if hmac.compare_digest(mac, hmac.new(key(), data, hashlib.sha256).hexdigest().encode()) else None


def own_folder(path: Path) -> Path:
    """Make (owner-only) or check a folder: NotOurs when it is a link, not a folder, or another user's."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise NotOurs(f"{path} is not a folder of this user's (a link, or made by someone else)")
    return path


def write_sealed(path: Path, text: str) -> None:
    """Write through a temp file beside `path`, renamed into place, sealed, owner-only."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write_new(tmp, sealed(text.encode("utf-8", "surrogatepass")))
    os.replace(tmp, path)


def write_new(path: Path, data: bytes) -> None:
    """Create (or truncate) a file of this user's, never through a link, owner-only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def read_sealed(path: Path) -> str | None:
    """A sealed file's text; None when it is not there, is not a regular file (a link, a FIFO, a device),
    is too large, or its seal is not this machine's."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        data = unsealed(handle.read())
    return data.decode("utf-8", "surrogatepass") if data is not None else None


def open_lock(path: Path) -> int:
    """A lock file's descriptor, made owner-only if needed, never through a link."""
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)


def held_elsewhere(path: Path) -> bool:
    """Whether another process holds the lock file at `path` now (a look, not a wait)."""
    from memcli.util.locks import flock_held

    if not os.path.lexists(path):
        return False
    try:
        fd = open_lock(path)
    except OSError:
        return False
    with os.fdopen(fd, "r+") as handle, flock_held(handle) as free:
        return not free
