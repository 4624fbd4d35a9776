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

import contextlib
import errno
import hashlib
import hmac
import os
import stat
from pathlib import Path

from memcli.errors import NotOurs

SEAL = b"\n#mem-seal "
KEY_FILE = "machine.key"
MAX_BYTES = 64 << 20  # a file of the queue or the capture state larger than this is not read

_keys: dict[str, bytes] = {}


def key() -> bytes:
    """This user's sealing key, made on first use (owner-only, in the config folder, never in a store).

    Two processes may make it at once (the first hooks of a new machine): each writes a whole key to a
    temp file of its own and links it into place, which only one link wins (O_EXCL semantics); every
    process then reads the winner's key. A key file is never removed here: a short one (written by hand,
    or by a mem before this) is an error to mend, not a file to replace while others may hold it."""
    folder = os.environ.get("MEM_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".config", "mem")
    path = os.path.join(folder, KEY_FILE)
    if path not in _keys:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not os.path.lexists(path):
            tmp = os.path.join(folder, f".{KEY_FILE}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
            write_new(tmp, os.urandom(32).hex().encode())
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another process won: its key is the one
            except OSError:  # a file system without hard links: exclusive create, the whole key at once
                with contextlib.suppress(FileExistsError):
                    write_exclusive(path, os.urandom(32).hex().encode())
            finally:
                os.unlink(tmp)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            value = handle.read(4096).strip()
        if len(value) < 32:
            raise NotOurs(f"{path} holds no whole key (mem's sealing key): remove it to make a new one")
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
    """Make (owner-only) or check a folder: NotOurs when it is a link, not a folder, or another user's.
    Called on every use, not only when the folder is made: a link committed after the first run (a pull)
    must not turn a later write or cleanup into one outside the store."""
    if ours(path):  # the usual case: one lstat, no exception
        return path
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    if not ours(path):
        raise NotOurs(f"{path} is not a folder of this user's (a link, or made by someone else)")
    return path


def ours(path: Path) -> bool:
    """Whether `path` is a folder of this user's, not a link (False when it is missing): what a reader
    checks before it lists or reads a folder of the queue or the capture state."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()


def own_root(path: Path) -> Path:
    """Check a store's folder before mem writes its queue or capture state in it: a folder of this user's,
    and no link, unless it is the user store (a link the user made, dotfiles). A project's `.mem` comes
    from git: committed as a link, it would carry every hook's writes outside the repository."""
    if ours(path):
        return path
    if os.path.islink(path) and os.path.isdir(path) and os.stat(path).st_uid == os.geteuid():
        from memcli.util.paths import user_store_dir

        if os.path.abspath(path) == os.path.abspath(user_store_dir()):
            return path
    raise NotOurs(f"{path} is not a store folder of this user's (a link, or made by someone else)")


def is_own_file(path: Path, *, empty: bool = False) -> bool:
    """Whether `path` is a regular file of this user's, not a link (and, `empty`, holds nothing): what a
    cleanup checks before it unlinks a file."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()
            and (not empty or info.st_size == 0))


def write_sealed(path: Path, text: str) -> None:
    """Write through a temp file beside `path`, renamed into place, sealed, owner-only."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    write_new(tmp, sealed(text.encode("utf-8", "surrogatepass")))
    os.replace(tmp, path)


def write_exclusive(path: str, data: bytes) -> None:
    """Create a file that must not exist yet, owner-only, never through a link, in one write."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


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
    """A lock file's descriptor, made owner-only if needed, never through a link. A lock holds no data, so
    one that is not a regular file (a link a commit brought, a FIFO) is replaced by one: the link goes,
    never what it points at."""
    for _ in range(3):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR) or os.path.isdir(path) and not os.path.islink(path):
                raise
        else:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return fd
            os.close(fd)
        os.unlink(path)
    raise NotOurs(f"{path} is not a lock file mem can use")


def held_elsewhere(path: Path) -> bool:
    """Whether another process holds the lock file at `path` now (a look, not a wait)."""
    from memcli.util.locks import flock_held

    if not os.path.lexists(path) or not ours(path.parent):
        return False
    try:
        fd = open_lock(path)
    except OSError:
        return False
    with os.fdopen(fd, "r+") as handle, flock_held(handle) as free:
        return not free
