"""What every command shares: error mapping, logging to stderr, JSON and listing output, what a write says."""

from __future__ import annotations

import importlib
import json
import logging
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import click

from memcli.cli import render
from memcli.cli.render import neutralise
from memcli.errors import MemError, StoreError


class MemGroup(click.Group):
    """Turns library exceptions into one line on stderr and an exit code; keeps pipes quiet."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MemError as exc:
            click.echo(f"mem: error: {neutralise(str(exc))}", err=True)
            ctx.exit(exc.exit_code)
        except BrokenPipeError:
            # `mem ls | head` closes the pipe early; that is not an error worth a traceback.
            sys.stderr.close()
            ctx.exit(0)
        except KeyboardInterrupt:
            click.echo("mem: interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:
            # Damage met after the command's first look at the index (every command rebuilds a catalog it
            # finds damaged then): rebuild now, and say so rather than answer from a damaged cache.
            from memcli.errors import describe
            from memcli.index.db import is_damage, is_unwritable

            if is_unwritable(exc):  # a full disk or a read-only store met where no caller expected it
                click.echo(f"mem: error: cannot write to the store: {neutralise(describe(exc))}", err=True)
                ctx.exit(StoreError.exit_code)
            env = ctx.find_object(Env)
            if env is None or not is_damage(exc):
                raise
            env.mem().catalog.recover(exc)
            click.echo("mem: error: the index was damaged and has been rebuilt from the memory files; "
                       "run the command again", err=True)
            ctx.exit(StoreError.exit_code)


class LazyGroup(MemGroup):
    """A group whose commands are imported when one is looked up (`modules`: command name -> module under
    memcli.cli whose COMMANDS holds it), not all of them when the CLI is: a one-shot command starts faster.
    Help and completion list every name, and import every module then."""

    def __init__(self, *args, modules: dict[str, str], **kwargs):
        super().__init__(*args, **kwargs)
        self.modules = modules

    def list_commands(self, ctx) -> list[str]:
        return sorted(self.modules)

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        """`mem path -v`, `mem ls --dir X`: the group's own options (-v, --dir, --color) given after the command are
        taken as if given before it, unless that command has an option of the same name itself."""
        return super().parse_args(ctx, _hoisted(self, ctx, list(args)))

    def get_command(self, ctx, name: str):
        if name not in self.modules:
            return None
        module = importlib.import_module(f"memcli.cli.{self.modules[name]}")
        return next(command for command in module.COMMANDS if command.name == name)


_GLOBAL_FLAGS = ("-v", "--verbose")
_GLOBAL_VALUES = ("--dir", "--color")


def _hoisted(group: click.Group, ctx, args: list[str]) -> list[str]:
    command, depth = group, 0
    while depth < len(args) and isinstance(command, click.Group) and not args[depth].startswith("-"):
        command = command.get_command(ctx, args[depth])
        depth += 1
    if command is None or command is group:
        return args
    own = {name for param in command.params for name in getattr(param, "opts", []) + getattr(param, "secondary_opts", [])}
    front, rest, n = [], args[:depth], depth
    while n < len(args):
        arg = args[n]
        if arg == "--":
            rest += args[n:]
            break
        name = arg.split("=", 1)[0]
        if (arg in _GLOBAL_FLAGS or re.fullmatch(r"-v+", arg)) and "-v" not in own and "--verbose" not in own:
            front.append(arg)
        elif name in _GLOBAL_VALUES and name not in own:
            front += args[n : n + (1 if "=" in arg else 2)]
            n += 0 if "=" in arg else 1
        else:
            rest.append(arg)
        n += 1
    return front + rest


class StderrHandler(logging.Handler):
    def emit(self, record):
        level = "warning" if record.levelno >= logging.WARNING else "info"
        # A message may quote a file name or a value from a hand-made file: never let it drive the terminal.
        click.echo(f"mem: {level}: {neutralise(record.getMessage())}", err=True)


def setup_logging(verbose: int) -> None:
    logger = logging.getLogger("memcli")
    logger.handlers[:] = [StderrHandler()]
    logger.setLevel(logging.DEBUG if verbose > 1 else logging.INFO if verbose else logging.WARNING)
    logger.propagate = False


class Env:
    """The per-invocation context: which store, how chatty. Opens the library only when asked."""

    def __init__(self, store_dir: Path | None, verbose: int, providers=None):
        self.store_dir = store_dir
        self.verbose = verbose
        self.providers = providers  # memcli.providers.Providers; None means the local default
        self._mem = None

    def mem(self):
        if self._mem is None:
            from memcli.core.mem import Mem

            self._mem = Mem.open(self.store_dir, self.providers)
        return self._mem

    def close(self) -> None:
        """At the end of the command: close the catalog, so SQLite folds its write-ahead log back into the
        database file and removes it (the objects left at exit are frozen, not collected: memcli.cli)."""
        if self._mem is not None:
            self._mem.catalog.close()

    def short_id(self, memory_id: str) -> str:
        """The short id listings show (memcli.store.ids: the shortest unique end of the id)."""
        return self.mem().catalog.short_id(memory_id)


pass_env = click.make_pass_decorator(Env)


def echo_json(value) -> None:
    """One JSON object on stdout: what every command's --json prints when its answer is one thing."""
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def emit(items: Iterable, fmt: str | None, *, row: Callable[[Any], dict], human: Callable[[Any], str],
         single: bool = False) -> int:
    """Write items to stdout as contract rows (--json/--jsonl) or human text; returns how many."""
    if fmt == "json" and single:
        rows = [row(item) for item in items]
        echo_json(rows[0] if rows else None)
        return len(rows)
    if fmt == "json":
        # An array streamed one object per line: valid JSON, and the fast C encoder does the work.
        count, pending = 0, None
        click.echo("[")
        for item in items:
            if pending is not None:
                click.echo(pending + ",")
            pending = json.dumps(row(item), ensure_ascii=False)
            count += 1
        if pending is not None:
            click.echo(pending)
        click.echo("]")
        return count
    count = 0
    for item in items:
        click.echo(json.dumps(row(item), ensure_ascii=False) if fmt == "jsonl" else human(item))
        count += 1
    return count


def redaction_note(counts: dict[str, int]) -> str | None:
    """"redacted 2 secrets: 1 aws-secret-key, 1 password", or None when nothing was redacted."""
    total = sum(counts.values())
    if not total:
        return None
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    return f"redacted {total} secret{'s' if total != 1 else ''}: {kinds}"


def say_redacted(counts: dict[str, int]) -> None:
    note = redaction_note(counts)
    if note:
        click.echo(f"mem: {note}", err=True)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def say_nothing_matched(under_cut: float | None) -> None:
    """An empty result, on a terminal, says so: with the best score the cut-off left out and the flag that
    shows it, when it left one out (stdout stays empty; a script reads the exit code)."""
    if not stderr_is_terminal():
        return
    if under_cut is None:
        click.echo("mem: nothing matched", err=True)
    else:
        click.echo(f"mem: nothing matched well enough: the best scored {under_cut:.2f}, under the cut-off"
                   " (--min-score 0 shows it)", err=True)


class ProgressBars:
    """The CLI side of memcli.util.progress.Progress: a bar per phase on stderr, counting the phase's unit
    (`ingesting chunks 12/119`), drawn only on a terminal and only for work still running `delay`
    seconds after its phase began, so quick commands stay quiet. A phase that starts over (a new
    source of a model pull) gets a new bar; an unknown total shows nothing. `counts=False` hides the
    numbers (bytes of a download read better as a percentage)."""

    def __init__(self, delay: float = 0.5, counts: bool = True):
        self.delay = delay
        self.counts = counts
        self.enabled = sys.stderr.isatty()
        self.bars: dict[str, Any] = {}
        self.began: dict[str, tuple[float, int]] = {}  # phase -> (when it began, done at the last call)

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if not self.enabled or total is None:
            return
        now = time.monotonic()
        began, last = self.began.get(phase, (now, 0))
        bar = self.bars.get(phase)
        if done < last or (bar is not None and bar.length != total):
            self._close(phase)
            bar, began = None, now
        self.began[phase] = (began, done)
        if bar is None:
            if done >= total or now - began < self.delay:
                return
            bar = self.bars[phase] = click.progressbar(length=total, label=phase, file=sys.stderr,
                                                       show_pos=self.counts, show_percent=True)
            bar.__enter__()
        bar.update(done - bar.pos)
        if done >= total:
            self._close(phase)

    def _close(self, phase: str) -> None:
        bar = self.bars.pop(phase, None)
        if bar is not None:
            bar.__exit__(None, None, None)

    def __enter__(self) -> "ProgressBars":
        return self

    def __exit__(self, *exc) -> None:
        for phase in list(self.bars):
            self._close(phase)


def say_versions(written, short_id) -> None:
    """stderr: what a write replaced, and which current memories it is close to, each by the short id
    listings show (a beginning of the id would be ambiguous between memories made in the same second)."""
    if written.replaced:
        ids = ", ".join(short_id(m.id) for m in written.replaced)
        fork = " (the fork is resolved)" if len(written.replaced) > 1 else ""
        click.echo(f"mem: {short_id(written.memory.id)} replaces {ids}{fork}", err=True)
    if written.replaced:
        return
    for close in written.similar:
        click.echo(f"mem: similar to {short_id(close.memory.id)} ({close.score:.2f}): "
                   f"{render.one_line(close.memory.content)[:70]}", err=True)
    if written.similar:
        click.echo(f"mem: if it replaces that memory, run the same add with --supersedes "
                   f"{short_id(written.similar[0].memory.id)} (it stores nothing twice)", err=True)


def announce_new_store(env: Env) -> None:
    mem = env.mem()
    if mem.created_store:
        click.echo(f"mem: created a new store at {mem.store.root}", err=True)


def compress_options(mem, *, no_compress: bool, defer: bool, progress):
    """How `add` and `update` compress: now, unless asked to defer, or unless the compression is for a
    server and the provider's `on_write` is `background` (a write never waits on a server): then it is
    queued and `after_write` starts a background runner."""
    from memcli.core.compressing import CompressOptions

    provider = mem.settings.provider
    background = not no_compress and bool(mem.providers.remote) and provider.on_write == "background"
    return CompressOptions(enabled=not no_compress, defer=defer or background, progress=progress)


def after_write(mem, written, options, asked_to_defer: bool) -> None:
    """Start a background runner for a compression `compress_options` queued for the server."""
    if options.defer and not asked_to_defer and written.memory.status == "pending":
        from memcli.store.queue import start_runner

        start_runner(mem.store.root)
        click.echo(f"mem: compression queued for {mem.providers.remote} (done in the background; "
                   "`mem status` shows the queue)", err=True)


def say_compressed(written, on_a_terminal: bool) -> None:
    """The one-line summary after the progress of a long write, on a terminal only."""
    info = written.memory.compression or {}
    if on_a_terminal and not written.duplicate and info.get("status") == "done":
        click.echo(f"mem: compressed {info.get('raw_tokens')} → {info.get('tokens')} tokens ({info.get('method')})",
                   err=True)


def say_written(written, as_json: bool, short_id) -> None:
    """What `add` and `update` print: the id (or JSON) on stdout, what happened on stderr."""
    say_redacted(written.redacted)
    if written.tags_added:
        click.echo(f"mem: already stored as {short_id(written.memory.id)}; merged the new tags into it: "
                   f"{', '.join(written.tags_added)}", err=True)
    elif written.duplicate:
        click.echo(f"mem: already stored as {short_id(written.memory.id)} (--allow-duplicate stores it again)",
                   err=True)
    say_versions(written, short_id)
    if as_json:
        extra = {"replaces": [m.id for m in written.replaced], "similar": [s.to_contract() for s in written.similar]}
        payload = written.memory.to_contract() | {"duplicate": written.duplicate, "redacted": written.redacted,
                                                  "tags_added": written.tags_added}
        echo_json(payload | {k: v for k, v in extra.items() if v})
    else:
        click.echo(written.memory.id)
