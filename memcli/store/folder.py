"""The store on disk: where it is, its settings, its memory files, atomic writes and the lock.

Files are the truth; everything under .index/ can be rebuilt from them. A write goes to a temp file
in the same folder and is renamed into place, so a reader or a crash never sees half a memory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import time
from pathlib import Path
from typing import Callable, Iterator

import yaml

from memcli.config import Settings
from memcli.errors import InvalidMemory, LocalDataExposed, StoreError
from memcli.store.comments import comments_of, with_comments
from memcli.store.memory import LOCAL_MEMORIES, Memory, is_local
from memcli.store.yamlfile import parse_yaml
from memcli.util.fsutil import atomic_write
from memcli.store.where import SETTINGS_FILE, find_store, locate_store  # noqa: F401 - the store's API
from memcli.util.paths import user_store_dir, work_tree_top

MEMORIES = "memories"
# What git never takes from a store: the caches, this machine's work queue and capture state, and what
# stays on this machine (captured memories and session threads until shared: docs/teams.md).
IGNORED = [".index/", ".queue/", ".capture/", f"{LOCAL_MEMORIES}/", "threads/local/"]
INDEX = ".index"
LOCK_TIMEOUT_S = 60.0

SETTINGS_HEADER = """\
# mem store settings; commit this file with the store. See `mem --help` and README.md.
# models: registry names (`mem models list`) or paths to .gguf files.
"""


class Store:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.settings_path = self.root / SETTINGS_FILE
        self.memories_dir = self.root / MEMORIES
        self.index_dir = self.root / INDEX
        self._settings: Settings | None = None
        self._lock_depth = 0
        self._private: bool | None = None
        self._memories_real: Path | None = None
        self._exposed: tuple[float, str | None] | None = None

    @property
    def private(self) -> bool:
        """The user store, and any store outside a git work tree, is its owner's alone: folders 0700,
        files 0600 whatever the umask. A store inside a repository is shared through git, so it
        follows the repository's modes (the umask), like every other file there."""
        if self._private is None:
            # user_store_dir() ends in "mem" on every platform: only then is platformdirs worth importing.
            self._private = work_tree_top(self.root) is None or (
                self.root.name == "mem" and self.root == user_store_dir())
        return self._private

    @property
    def file_mode(self) -> int | None:
        return 0o600 if self.private else None

    def protect(self, *paths: Path) -> None:
        """Make files mem did not write itself (the catalog, its journal, the vector graph) 0600 in a
        private store, and its folder and .index/ 0700 (a store made before mem did this, or an .index/
        that SQLite's side made, is tightened here)."""
        if not self.private:
            return
        for path in (self.root, self.index_dir, *paths):
            with contextlib.suppress(FileNotFoundError):
                wanted = 0o700 if path in (self.root, self.index_dir) else 0o600
                if os.stat(path).st_mode & 0o777 != wanted:
                    os.chmod(path, wanted)

    def make_dir(self, folder: Path) -> None:
        """The folder and any missing parent, 0700 in a private store (mkdir's own `parents` ignores mode)."""
        if not folder.is_dir():
            self.make_dir(folder.parent)
            with contextlib.suppress(FileExistsError):
                folder.mkdir(mode=0o700 if self.private else 0o777)

    @property
    def read_only(self) -> bool:
        """Whether this process can write nothing in the store (a read-only mount, or a folder it may not
        write): it then reads without the lock, which only orders writers, and its index is a copy in
        memory (memcli.index.catalog)."""
        folder = self.index_dir if self.index_dir.is_dir() else self.root
        try:
            return bool(os.statvfs(folder).f_flag & os.ST_RDONLY) or not os.access(folder, os.W_OK)
        except OSError:
            return False

    @property
    def exists(self) -> bool:
        return self.settings_path.is_file()

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = self._read_settings()
        return self._settings

    def _read_settings(self) -> Settings:
        if not self.exists:
            return Settings()
        try:
            # Committed and shared like the memories, so read the same guarded way (no aliases).
            data = parse_yaml(self.settings_path.read_text(encoding="utf-8"), str(self.settings_path))
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"cannot read {self.settings_path}: {exc}") from None
        except InvalidMemory as exc:
            raise StoreError(f"cannot read {exc}") from None
        settings = Settings.from_yaml_dict(data, str(self.settings_path))
        self._refuse_models_the_repository_brings(settings)
        return settings

    def _refuse_models_the_repository_brings(self, settings: Settings) -> None:
        """A model named by path in a mem.yaml others may write (memcli.providers.consent.others_may_write)
        must not be a file of the project itself: llama.cpp would parse whatever a commit put there. Model
        files never belong in git; one outside the project (a path on this machine) is the user's own."""
        from memcli.providers.llama import looks_like_path

        named = [(role, ref) for role, ref in (("embed", settings.embed_model), ("compress", settings.compress_model))
                 if looks_like_path(ref)]
        if not named:
            return
        from memcli.providers.consent import others_may_write

        if not others_may_write(self.root):
            return
        project = os.path.realpath(work_tree_top(self.root) or self.root.parent)
        for role, ref in named:
            path = os.path.realpath(os.path.expanduser(ref))
            if os.path.commonpath([path, project]) == project:
                raise StoreError(f"{self.settings_path}: models: {role} names {ref}, a file inside the project; mem "
                                 "loads a model a committed mem.yaml names only from the registry or from outside "
                                 "the project (keep model files outside the repository and name their path)")

    def init(self, *, git: bool = False) -> bool:
        """Create the layout (idempotent); True when mem.yaml was new."""
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(f"{self.root} exists and is not a folder")
        try:
            self.make_dir(self.memories_dir)
            self.make_dir(self.index_dir)
            self.protect()
            created = not self.exists
            if created:
                body = yaml.safe_dump(Settings().to_yaml_dict(), sort_keys=False, allow_unicode=True)
                atomic_write(self.settings_path, SETTINGS_HEADER + body, self.file_mode)
            # The caches, this machine's work queue and capture state, and the temp files an interrupted
            # atomic write may leave, are never shared.
            _ensure_lines(self.root / ".gitignore", [*IGNORED, ".*.tmp"], self.file_mode)
            if git:
                # Memories are text with LF line ends on every machine, so a checkout on Windows does not
                # rewrite every file and diffs stay line by line.
                # The vector cache (memcli.index.vector_cache) is binary: never diffed, never merged as text.
                _ensure_lines(self.root / ".gitattributes", ["memories/**/*.yaml text eol=lf diff", "mem.yaml text eol=lf",
                                                             "vectors/**/*.vec binary"], self.file_mode)
        except OSError as exc:
            raise StoreError(f"cannot create a store at {self.root}: {exc.strerror or exc}") from None
        return created

    def file_path(self, relpath: str) -> Path:
        """Absolute path of a file inside the store; refuses anything that would land outside memories/.
        The real path of memories/ is taken once it exists (a refresh after an import asks for thousands)."""
        path = (self.root / relpath).resolve()
        inside = self._memories_real or self.memories_dir.resolve()
        if path == inside or not path.is_relative_to(inside):
            raise StoreError(f"refusing a path outside the store: {relpath}")
        if self._memories_real is None and self.memories_dir.is_dir():
            self._memories_real = inside
        return path

    def write(self, memory: Memory) -> str:
        """Write (or overwrite) a memory's file atomically; returns its path relative to the root. The
        comments a person wrote in the file it replaces stay (memcli.store.comments), unless the memory
        brings its own (`mem edit`)."""
        relpath = memory.relpath()
        path = self.file_path(relpath)
        if memory.local:
            self.keep_local_out_of_git()
        try:
            kept = memory.comments if memory.comments is not None else _comments_in(path)
            self.make_dir(path.parent)
            atomic_write(path, with_comments(memory.to_yaml(), kept), self.file_mode)
        except OSError as exc:
            raise StoreError(f"cannot write {relpath}: {exc.strerror or exc}") from None
        return relpath

    def read(self, relpath: str) -> Memory:
        text = self.file_path(relpath).read_text(encoding="utf-8")
        memory = Memory.from_yaml(text, relpath)
        memory.local = is_local(relpath)
        return memory

    def keep_local_out_of_git(self) -> None:
        """The store's .gitignore leaves out what stays on this machine (a store made before local memories
        gets the lines at its first local write), and nothing would take it into git anyway: the check
        comes before every write there, LocalDataExposed when it fails."""
        _ensure_lines(self.root / ".gitignore", IGNORED, self.file_mode)
        why = self.local_data_exposed()
        if why:
            raise LocalDataExposed(why)

    def local_data_exposed(self) -> str | None:
        """Why what stays on this machine would not (a committed link as memories/local/ or threads/local/,
        or a .gitignore, of the store or the repository, that lets git take it), or None. Asks git once
        a minute at most: a capture run writes many files."""
        now = time.monotonic()
        if self._exposed is not None and now - self._exposed[0] < 60:
            return self._exposed[1]
        why = _local_folders_unsafe(self.root) or _git_would_take(self.root)
        self._exposed = (now, why)
        return why

    def delete(self, relpath: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.file_path(relpath).unlink()

    def scan(self, start: str = MEMORIES, *, folders: dict | None = None,
             descend: Callable[[str], bool] | None = None) -> list[tuple[str, int, int, int]]:
        """Memory files under `start` (a folder relative to the root) as (relpath, mtime_ns, size, ctime_ns);
        `folders` and `descend` as for stats()."""
        return [(prefix + name, info.st_mtime_ns, info.st_size, info.st_ctime_ns)
                for prefix, name, info in self.stats(start, folders=folders, descend=descend)]

    def stats(self, start: str = MEMORIES, *, folders: dict | None = None,
              descend: Callable[[str], bool] | None = None) -> Iterator[tuple[str, str, os.stat_result]]:
        """Memory files under `start` as (their folder relative to the root + "/", name, stat).

        `folders`, when given, gets the mtime of every folder walked (None when it is missing), taken
        before its listing so that a change during the walk shows up next time (a file deleted between
        the listing and its stat is left out: its folder moved); `descend(relfolder)` says whether to
        enter a subfolder (default: every one). Each folder is listed through its file descriptor, so a
        file's stat resolves its name alone, not the whole path (a quarter less time).
        """
        stack = [start]
        while stack:
            folder = stack.pop()
            try:
                fd = os.open(os.path.join(self.root, folder), os.O_RDONLY | os.O_DIRECTORY)
            except (FileNotFoundError, NotADirectoryError):
                if folders is not None:
                    folders[folder] = None
                continue
            try:
                if folders is not None:
                    folders[folder] = os.fstat(fd).st_mtime_ns
                prefix = folder + "/"
                for entry in os.scandir(fd):
                    name = entry.name
                    if name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if descend is None or descend(prefix + name):
                            stack.append(prefix + name)
                    elif name.endswith(".yaml") and entry.is_file(follow_symlinks=False):
                        try:
                            info = entry.stat(follow_symlinks=False)
                        except FileNotFoundError:
                            continue
                        yield prefix, name, info
            finally:
                os.close(fd)

    @contextlib.contextmanager
    def lock(self, timeout: float = LOCK_TIMEOUT_S):
        """One writer at a time for files and index; other processes wait, then give up clearly.

        Re-entrant within a process, so a write may refresh the index while it holds the lock.
        """
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        path = self.index_dir / "lock"
        try:
            self.make_dir(self.index_dir)
            self.protect()
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)  # only a cache folder: whatever took the lock file's place goes
            _drop_links(self.index_dir)
            handle = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW,
                                       0o600 if self.private else 0o666), "a+")
        except OSError as exc:
            if not self.read_only:
                raise StoreError(f"cannot lock {self.index_dir}: {exc.strerror or exc}") from None
            handle = None  # no writer can come: nothing to wait for (a write itself fails, and says why)
        if handle is None:
            self._lock_depth = 1
            try:
                yield
            finally:
                self._lock_depth = 0
            return
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() > deadline:
                        raise StoreError(f"the store {self.root} is locked by another mem process") from None
                    time.sleep(0.02)
            self._lock_depth = 1
            yield
        finally:
            self._lock_depth = 0
            handle.close()


def _comments_in(path: Path) -> list:
    """The comments of the memory file at `path`; none when there is no file (a new memory)."""
    try:
        return comments_of(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read {path.name} to keep its comments: {exc}") from None


MAX_LINES_FILE = 1 << 20  # a .gitignore or .gitattributes larger than this is no store's


def _ensure_lines(path: Path, lines: list[str], mode: int | None) -> None:
    """Add the lines `path` lacks. The file comes from git: it is read only as a regular file, never
    through a link (a committed `.gitignore -> /proc/self/environ` would copy the environment into the
    store); a link or anything else there is replaced by a file holding mem's lines alone."""
    existing = _own_lines(path)
    missing = [line for line in lines if line not in existing]
    if missing:
        atomic_write(path, "\n".join(existing + missing) + "\n", mode)


def _own_lines(path: Path) -> list[str]:
    """The lines of a regular file at `path` (not followed through a link); none when there is none."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # missing, or a link (ELOOP)
        return []
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return []
        if info.st_size > MAX_LINES_FILE:
            raise StoreError(f"{path} is larger than {MAX_LINES_FILE} bytes: not read")
        return handle.read(MAX_LINES_FILE).decode("utf-8", "replace").splitlines()


LOCAL_FOLDERS = (LOCAL_MEMORIES, "threads/local")


def _local_folders_unsafe(root: Path) -> str | None:
    """A folder of what stays here that is a link or not this user's folder (a link committed by anyone
    would carry local data into a folder git takes, or out of the store)."""
    import stat

    steps = [part for relpath in LOCAL_FOLDERS for part in (relpath.split("/")[0], relpath)]
    for relpath in steps:  # each folder on the way: a committed `threads -> elsewhere` carries local/ too
        try:
            info = os.lstat(root / relpath)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            return (f"{root / relpath} is a link or not a folder of yours: what stays on this machine "
                    f"would be written through it; remove it (mem makes the folder again)")
    for relpath in LOCAL_FOLDERS:  # and every link below them (`memories/local/2026 -> ../2026`)
        linked = _first_link(root / relpath)
        if linked:
            return (f"{linked} is a link: what stays on this machine would be written through it into a "
                    f"folder git takes; remove it (mem makes the folder again)")
    return None


def _first_link(folder: Path) -> Path | None:
    """The first link anywhere under `folder` (not following links), or None."""
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return None
    for entry in entries:
        if entry.is_symlink():
            return Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            found = _first_link(Path(entry.path))
            if found:
                return found
    return None


def keeps_local(root: Path) -> bool:
    """Whether the store's .gitignore has the lines that leave out what stays on this machine."""
    return f"{LOCAL_MEMORIES}/" in _own_lines(root / ".gitignore")


def _git_would_take(root: Path) -> str | None:
    """Which folder of what stays here git would commit (a `!memories/local/` in some .gitignore, or the
    store's own lines removed), as `git check-ignore` decides; None outside a work tree or without git."""
    import subprocess

    if work_tree_top(root) is None:
        return None
    probes = [f"{relpath}/probe/probe.yaml" for relpath in LOCAL_FOLDERS]
    try:
        done = subprocess.run(["git", "-C", str(root), "check-ignore", "--no-index", "--stdin", "-z", "-n", "-v"],
                              input="\0".join(probes) + "\0", capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode not in (0, 1):
        return None
    fields = done.stdout.split("\0")
    # -z -v -n: source, line, pattern, path for each probe; an empty pattern (or a "!" one) is not ignored
    for at in range(0, len(fields) - 3, 4):
        pattern, path = fields[at + 2], fields[at + 3]
        if not pattern or pattern.startswith("!"):
            folder = path.rsplit("/probe/", 1)[0]
            return (f"git would commit {root / folder}/ (what stays on this machine: captured work not shared)"
                    + (f": `{pattern}` in {fields[at]}" if pattern else ": no .gitignore line leaves it out, or one "
                                                                       "brings it back")
                    + f"; put `{folder}/` back in {root / '.gitignore'} and remove any line that re-includes it")
    return None


def _drop_links(folder: Path) -> None:
    """Take out every link under the index folder, before any write there: it is a rebuildable cache that mem
    fills with plain files only, so a link is one a commit or someone else put there (`.index/catalog.sqlite ->
    ~/.bashrc` would have the next write overwrite that file). The link goes, never what it names."""
    for entry in os.scandir(folder):
        if entry.is_symlink():
            os.unlink(entry.path)
        elif entry.is_dir(follow_symlinks=False):
            _drop_links(Path(entry.path))
