"""`mem doctor`: what is wrong with a store, and the command that fixes each thing.

A store shared through git meets things a private one does not: a merge that left conflict markers
in a memory file, the same memory under two paths, caches committed by mistake, a teammate's store
settings naming a model this machine has not pulled. Each check gives one finding per problem, with
a fix a person can run; `healthy` means no check found a problem.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memcli.errors import MemError, StoreError, describe
from memcli.index.catalog import DUPLICATE
from memcli.store.folder import INDEX
from memcli.util.fsutil import stale_temps
from memcli.util.paths import display_path
from memcli.util.words import counted

CONFLICT_MARKERS = ("<<<<<<< ", ">>>>>>> ")


@dataclass
class Finding:
    check: str
    ok: bool
    message: str
    fix: str | None = None
    info: bool = False  # worth knowing, not a problem (memories queued by --defer): `ok` stays true

    @property
    def level(self) -> str:
        return "fail" if not self.ok else "info" if self.info else "ok"

    def to_dict(self) -> dict:
        return {"check": self.check, "ok": self.ok, "level": self.level, "message": self.message, "fix": self.fix}


def diagnose(mem, progress=None, *, fix: bool = False, sample: int = 0) -> list[Finding]:
    """Every check, in the order a person would fix things (a store that cannot be read stops here).

    Like a search, it first catches the index up with the files (and embeds what has no vector, with
    `progress` reporting), so what it calls stale is what could not be caught up. Unlike a search, it
    reads every page of the caches, and rebuilds one it finds damaged. `fix` also removes the temp
    files that killed processes left; `sample` cached vectors are checked against fresh embeddings."""
    store = mem.store
    if not store.exists:
        return [Finding("store", False, f"no store at {store.root}", f"mem init {store.root}")]
    try:
        store.settings
    except StoreError as exc:
        return [Finding("store", False, str(exc), "repair mem.yaml by hand (`git diff mem.yaml` shows what changed)")]
    repaired = [f"the catalog was damaged ({problem}) and has been rebuilt from the files"
                for problem in [mem.catalog.check()] if problem]
    behind = mem.catalog.looks.behind()
    mem.catalog.refresh(full=True)
    repaired += [f"the vector index was {problem}; its vectors are searched directly until it is rebuilt"
                 for problem in [mem.vectors.check_file(deep=True)] if problem]
    findings = [Finding("store", True, f"{store.root} ({mem.catalog.count()} memories)")]
    broken = mem.catalog.broken_files()
    findings += _unreadable(store.root, [(p, e) for p, e in broken if not e.startswith(DUPLICATE)], mem.catalog.count())
    findings += _duplicates(store.root, [(p, e) for p, e in broken if e.startswith(DUPLICATE)])
    findings += _forks(mem)
    findings += _ingested_twice(mem)
    findings.append(_index(mem, behind, progress, repaired))
    findings += _vector_cache(mem, sample)
    findings += _temps(store.root, fix)
    findings += _models(mem.settings, mem.providers.locate_model)
    findings += _git(store.root)
    findings += _compression(mem)
    findings += _parked(mem)
    findings += _capture_settings(mem)
    findings += _machine_folders(store.root)
    findings += _local_data_in_git(store.root)
    return findings


def _local_data_in_git(root: Path) -> list[Finding]:
    """What stays on this machine (captured work not shared) that git would commit (memcli.store.folder)."""
    from memcli.store.folder import LOCAL_FOLDERS, Store, keeps_local

    if not keeps_local(root) and not any(os.path.lexists(root / folder) for folder in LOCAL_FOLDERS):
        return []  # a store made before local data: its first write there adds the lines, then checks
    why = Store(root).local_data_exposed()
    return [Finding("local data", False, why, "capture keeps its work in the queue until this is mended")] if why \
        else []


def _machine_folders(root: Path) -> list[Finding]:
    """A folder of the work queue or the capture state that is not this user's (a link a commit brought):
    mem neither reads nor writes it, so capture and queued work stop there until it is removed."""
    from memcli.capture.spool import FOLDER as CAPTURE
    from memcli.store.queue import FOLDER as QUEUE
    from memcli.util.own_files import ours

    folders = [QUEUE, *(f"{QUEUE}/{name}" for name in ("jobs", "parked", "done", "locks", "bad")),
               CAPTURE, *(f"{CAPTURE}/{name}" for name in ("sessions", "seen", "context"))]
    bad = [name for name in folders if os.path.lexists(root / name) and not ours(root / name)]
    return [Finding("machine folders", False, f"{root / name} is a link or not a folder of yours: mem does not "
                                              f"use it (a commit may have brought it)", f"rm {root / name}")
            for name in bad]


def _capture_settings(mem) -> list[Finding]:
    """Capture settings of mem.yaml that wait for the user's word (memcli.providers.consent)."""
    from memcli.features.status import capture_not_agreed

    return [Finding("capture", True, why, info=True) for why in capture_not_agreed(mem)]


def _unreadable(root: Path, broken: list[tuple[str, str]], readable: int) -> list[Finding]:
    if not broken:
        return [Finding("files", True, f"all {readable} memory files are readable")]
    findings = []
    for relpath, error in broken:
        try:
            text = (root / relpath).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        path = display_path(root / relpath)
        git, named = _git_here(root, relpath)
        if any(marker in text for marker in CONFLICT_MARKERS):
            findings.append(Finding("files", False, f"{path}: unresolved git merge conflict",
                                    f"edit {path} to keep the right text (or `{git} checkout --theirs -- {named}`), "
                                    f"then `{git} add {named}`"))
        else:
            findings.append(Finding("files", False, f"{path}: {error} (skipped by every command)",
                                    f"repair it by hand (mem edit cannot open it), or restore it: "
                                    f"{git} checkout -- {named}"))
    return findings


def _git_here(root: Path, relpath: str) -> tuple[str, str]:
    """How to name a store file to git from the current folder, where the user types the fix: plain `git`
    and the path from here inside the store's work tree, else `git -C <store>` and the store's own path."""
    top = (_git_output(root, "rev-parse", "--show-toplevel") or "").strip()
    here, top = os.path.realpath(os.getcwd()), os.path.realpath(top) if top else ""
    if top and (here == top or here.startswith(top + os.sep)):
        return "git", display_path(root / relpath)
    return f"git -C {shlex.quote(display_path(root))}", relpath


def _duplicates(root: Path, duplicates: list[tuple[str, str]]) -> list[Finding]:
    if not duplicates:
        return [Finding("ids", True, "every memory id is unique")]
    return [Finding("ids", False, f"{display_path(root / path)}: {error}",
                    f"the same memory is in two files; mem reads the other one. Compare them "
                    f"(diff {display_path(root / path)} {display_path(root / error.rpartition(' also in ')[2])}), "
                    "keep one, delete the other")
            for path, error in duplicates]


def _forks(mem) -> list[Finding]:
    from memcli.index.versions import forks, loops, unrelated

    found = forks(mem.catalog)
    looped = [_loop(mem.catalog, loop) for loop in loops(mem.catalog)]
    hiding = [Finding("versions", False, f"{new} replaces {len(olds)} separate memories ({_some(olds)}): an update "
                                         "replaces one memory, so ls and search no longer show the others",
                      f"mem edit {new}   (take the ones it should not replace out of its supersedes: list)")
              for new, olds in unrelated(mem.catalog)]
    if not found and not looped and not hiding:
        return [Finding("versions", True, "every updated memory has one current version")]
    return [Finding("versions", False, f"{fork.base} was updated twice (a fork, e.g. from a git merge): "
                                       f"{' and '.join(m.id for m in fork.heads)} are both current",
                    f"mem update {fork.heads[0].id} TEXT   (replaces both; `mem show {fork.base} --history` "
                    f"shows them)")
            for fork in found] + looped + hiding


def _some(ids: list[str], shown: int = 3) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _loop(catalog, loop: list[str]) -> Finding:
    """A loop of versions, and the link to take out: the one where an older version claims to replace a
    newer one (what an edit of an old version's `supersedes` does); each version replaces the next."""
    links = list(zip(loop, loop[1:] + loop[:1]))
    created = {}
    for version in loop:  # ids sort by time too, within the second created_at keeps
        try:
            created[version] = (catalog.get(version).created_at, version)
        except MemError:
            created[version] = ("", version)
    new, old = next(((n, o) for n, o in links if created[n] < created[o]), links[-1])
    return Finding("versions", False, f"{' and '.join(loop)} replace each other (a loop of versions, from a hand "
                                      "edit or a merge): none of them is current, so ls and search show none",
                   f"mem edit {new}   (take {old} out of its supersedes: list)")


def _ingested_twice(mem) -> list[Finding]:
    """Two current memories of one ingested chunk (an older mem re-ingested a file beside a chunk
    corrected with `mem update`): search would rank the stale one beside the correction."""
    from memcli.core.reading import listing
    from memcli.features.ingest.walk import WRITTEN_BY
    from memcli.store.sources import CHUNK

    by_source: dict[str, list] = {}
    for memory in listing(mem):
        if memory.source and CHUNK.match(memory.source):
            by_source.setdefault(memory.source, []).append(memory)
    findings = []
    for source, memories in sorted(by_source.items()):
        if len(memories) < 2 or not any(m.written_by == WRITTEN_BY for m in memories):
            continue
        path = Path(os.path.expanduser(CHUNK.match(source)["path"]))
        findings.append(Finding("ingest", False, f"{source} is the source of {len(memories)} current memories "
                                                 f"({', '.join(m.id for m in memories)}): one chunk of a file",
                                f"mem ingest {shlex.quote(display_path(mem.home / path))}   (keeps a chunk "
                                "corrected with mem update, removes stale copies)"))
    return findings


def _index(mem, behind: tuple[int, int], progress, repaired: list[str]) -> Finding:
    changed, removed = behind
    done = repaired + ([f"{changed} new or changed and {removed} removed files"] if any(behind) else [])
    missing = mem.vectors.missing()
    try:
        synced = mem.index_vectors(progress)  # also when every vector is there but made another way
    except Exception as exc:  # a missing model, or a broken one that crashes (the models check says which)
        if missing:
            return Finding("index", False, f"{missing} memories have no vector, so meaning search misses them "
                                           f"({describe(exc)})",
                           "get the embedding model working (see the models check), then: mem reindex")
        synced = None
    if synced and (synced.cached or synced.embedded):
        done.append(" and ".join([f"took {synced.cached} vectors from the vector cache"] * bool(synced.cached)
                                 + [f"embedded {synced.embedded} memories"] * bool(synced.embedded))
                    + ("" if synced.cached + synced.embedded == missing else " (the embedding changed)"))
    return Finding("index", True, "up to date" + (f" (caught up: {'; '.join(done)})" if done else ""))


def _vector_cache(mem, sample: int) -> list[Finding]:
    """How much of the store the vector cache covers (what a clone gets without embedding), the files it
    ignores (damaged, truncated), and, when asked, a sample of cached vectors against fresh embeddings."""
    from memcli.index.vector_cache import check

    try:
        report = check(mem.catalog, mem.embedder(), sample)
    except Exception:  # no model: the models check says why
        return []
    findings = [Finding("cache", True, f"the vector cache holds {report.hits} of {report.total} memories' vectors "
                                       f"({report.hit_rate:.0%}; {report.bytes / 1e6:.1f} MB in {counted(report.files, 'file')})"
                        + (f"; {counted(report.unused, 'vector')} of texts no longer stored" if report.unused else ""),
                        None if report.hits == report.total else "mem reindex   (embeds the rest into the cache)",
                        info=report.hits != report.total)]
    findings += [Finding("cache", False, f"ignored: {problem}",
                         "delete the file and commit the deletion; its vectors are embedded again when needed")
                 for problem in report.problems]
    findings += [Finding("cache", False, f"{forged} (a damaged or forged file: meaning search is misled by it)",
                         "delete the file and commit the deletion, then: mem reindex")
                 for forged in report.forged]
    if sample:
        findings.append(Finding("cache", not report.mismatched,
                                f"{report.checked} cached vectors checked against fresh embeddings: "
                                + (f"{len(report.mismatched)} differ ({', '.join(report.mismatched[:3])})"
                                   if report.mismatched else "all match"),
                                "delete vectors/ (it is only a cache) and run mem reindex" if report.mismatched else None))
    return findings


def _temps(root: Path, fix: bool) -> list[Finding]:
    stale = sorted(stale_temps(root))
    if fix:
        for path in stale:
            path.unlink(missing_ok=True)
        return [Finding("temp", True, f"removed {len(stale)} temp files left by interrupted writes"
                        if stale else "no temp files left by interrupted writes")]
    if not stale:
        return [Finding("temp", True, "no temp files left by interrupted writes")]
    shown = ", ".join(str(path.relative_to(root)) for path in stale[:3]) + (" ..." if len(stale) > 3 else "")
    return [Finding("temp", False, f"{len(stale)} temp files left by interrupted writes ({shown})",
                    "mem doctor --fix")]


def _models(settings, locate_model) -> list[Finding]:
    findings = []
    for role, ref in (("embed", settings.embed_model), ("compress", settings.compress_model)):
        try:
            path = locate_model(ref, role)
        except ImportError:
            return [Finding("models", False, "cannot check the models: this installation of mem has no model layer",
                            "reinstall mem (pip install --force-reinstall memcli)")]
        except MemError as exc:
            pull = ref if not ref.endswith(".gguf") else None
            findings.append(Finding("models", False, f"{role} model: {exc}",
                                    f"mem models pull {pull}" if pull else f"fix models.{role} in mem.yaml"))
            continue
        findings.append(Finding("models", True, f"{role} model {ref} is at {path}"))
    return findings


def _git(root: Path) -> list[Finding]:
    inside = _git_output(root, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != "true":
        lines = (root / ".gitignore").read_text(encoding="utf-8").splitlines() if (root / ".gitignore").is_file() else []
        if f"{INDEX}/" in lines or INDEX in lines:
            return [Finding("git", True, "not in a git repository; .gitignore already leaves out .index/")]
        return [Finding("git", False, ".gitignore does not leave out .index/ (the caches must not be shared)",
                        f"mem init {root}   (adds .index/ to .gitignore)")]
    findings = []
    if _git_output(root, "check-ignore", "-q", f"{INDEX}/catalog.sqlite") is None:
        findings.append(Finding("git", False, "git does not ignore .index/: the caches would be committed",
                                f"mem init {root}   (adds .index/ to .gitignore), then commit .gitignore"))
    tracked = (_git_output(root, "ls-files", "--", INDEX) or "").split()
    if tracked:
        findings.append(Finding("git", False, f".index/ is committed ({len(tracked)} files): every pull would fight "
                                              "over the caches",
                                f"git -C {root} rm -r --cached {INDEX} && git -C {root} commit -m 'Stop tracking the "
                                "mem index'"))
    return findings or [Finding("git", True, "in a git repository; .index/ is ignored and not committed")]


def _git_output(root: Path, *args: str) -> str | None:
    """git's stdout, or None when git is missing or says no."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _compression(mem) -> list[Finding]:
    from memcli.core.reading import to_compress

    findings = []
    pending = to_compress(mem, pending=True)
    if pending:
        findings.append(Finding("compression", True, f"{counted(len(pending), 'memory', 'memories')} "
                                                     f"{'waits' if len(pending) == 1 else 'wait'} to be compressed (--defer); "
                                                     "they are found by search meanwhile", "mem compress --pending",
                                info=True))
    failed = [m for m in to_compress(mem, failed=True) if m.served_raw is None]
    if failed:
        reason = (failed[-1].compression or {}).get("reason", "unknown reason")
        findings.append(Finding("compression", False, f"{len(failed)} memories failed to compress "
                                                      f"(latest: {failed[-1].id}: {reason})",
                                "mem compress --failed"))
    findings += _served_raw(mem)
    findings += _raw_on_purpose(mem)
    return findings or [Finding("compression", True, "nothing pending or failed")]


def _parked(mem) -> list[Finding]:
    """Jobs of the work queue that kept failing, each named with its reason (memcli.store.queue)."""
    from memcli.store.queue import WorkQueue

    queue = WorkQueue(mem.store.root)
    parked = queue.parked()
    bad = queue.counts()["bad"]
    if bad:
        from memcli.store.queue import set_aside_why

        parked_findings = [Finding("work queue", False, set_aside_why(bad),
                                   f"look at {queue.root / 'bad'}, then delete the files there")]
    else:
        parked_findings = []
    return parked_findings + [Finding("work queue", False, f"the {job.kind} job {job.name} was parked after {counted(job.tries, 'try', 'tries')}: "
                                         f"{job.error or 'unknown reason'}",
                    f"mem queue retry {job.name}  (or: mem queue drop {job.name})") for job in parked]


SHOWN_ONE_BY_ONE = 5


def _served_raw(mem) -> list[Finding]:
    """Compressed forms that fail the guard (edited by hand, reversed by a merge, made by an older mem):
    reads serve the raw text instead; making the form again from the raw text mends them."""
    found = mem.catalog.served_raw()
    if len(found) <= SHOWN_ONE_BY_ONE:
        return [Finding("compression", False, f"{memory_id}: its compressed form does not say what the raw text "
                                              f"says ({reason}); the raw text is served instead",
                        f"mem compress {memory_id}   (makes the form again from the raw text; or mem edit "
                        f"{memory_id} to correct it)")
                for memory_id, reason in found]
    shown = ", ".join(memory_id for memory_id, _ in found[:3])
    return [Finding("compression", False, f"{len(found)} memories have a compressed form that does not say what "
                                          f"their raw text says ({shown} ...; {found[0][0]}: {found[0][1]}); their "
                                          "raw texts are served instead",
                    "mem compress --failed   (makes their forms again from the raw texts)")]


TOLD = "told_raw_on_purpose"  # the catalog's note of the memories doctor has said are raw on purpose


def _raw_on_purpose(mem) -> list[Finding]:
    """Memories whose compression failed the same way on every try are stored raw on purpose: said once
    (as information), not again on every run."""
    from memcli.compress.pipeline import ON_PURPOSE
    from memcli.core.reading import listing
    from memcli.index import db as db_file

    told = set(json.loads(db_file.meta(mem.catalog.db, TOLD) or "[]"))
    new = [m for m in listing(mem) if (m.compression or {}).get("reason", "").startswith(ON_PURPOSE)
           and m.id not in told]
    if not new:
        return []
    if not mem.catalog.in_memory:
        db_file.set_meta(mem.catalog.db, TOLD, json.dumps(sorted(told | {m.id for m in new})))
    reason = new[-1].compression["reason"].removeprefix(ON_PURPOSE)
    return [Finding("compression", True, f"{counted(len(new), 'memory', 'memories')} stored raw on purpose: "
                                         f"compressing failed the same way on every try (latest: {new[-1].id}: "
                                         f"{reason}); said once", info=True)]
