"""`mem edit`: a memory's file in the user's editor, checked before it is saved."""

from __future__ import annotations

from pathlib import Path

import click

from memcli.cli import completion
from memcli.cli.common import Env, pass_env, say_redacted
from memcli.cli.options import interactive
from memcli.errors import InputError, InvalidMemory, Refused


@click.command()
@click.argument("memory_id", metavar="ID", shell_complete=completion.ids)
@pass_env
def edit(env: Env, memory_id: str) -> None:
    """Open a memory's YAML file in $EDITOR; it is checked before it is saved.

    If the raw text changed, a new compressed form is made. An invalid edit is never saved, nor kept:
    on a terminal you may reopen it. The editor works on a private temp file inside the store
    (.index/), removed when mem is done whatever happens.
    """
    from memcli.core.reading import get
    from memcli.features.editing import edit_text, save_edit
    from memcli.util.fsutil import scratch_file

    mem = env.mem()
    memory = get(mem, memory_id)
    with scratch_file(mem.store.index_dir / f"edit-{memory.id}.yaml", edit_text(mem, memory)) as path:
        while True:
            edited = _edit(path)
            if edited is None:
                click.echo("mem: no change", err=True)
                return
            try:
                saved = save_edit(mem, memory, edited)
            except (InvalidMemory, InputError, Refused) as exc:
                click.echo(f"mem: error: {exc}", err=True)
                if interactive() and click.confirm("Reopen the editor?", default=True, err=True):
                    continue
                raise type(exc)("the edit was not saved, nor kept") from None
            say_redacted(saved.redacted)
            click.echo("mem: no change" if saved.memory is None else f"saved {env.short_id(memory.id)}", err=True)
            return


def _editor() -> str:
    """$VISUAL, $EDITOR, then `editor` and `vi`: the first that can be found. A variable naming a program
    that is not there is said and passed over."""
    import os
    import shlex
    import shutil

    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if not value:
            continue
        words = shlex.split(value)
        if words and shutil.which(words[0]):
            return value
        click.echo(f"mem: warning: ${name} is {value!r}, which cannot be found; trying the next editor", err=True)
    for fallback in ("editor", "vi"):
        if shutil.which(fallback):
            return fallback
    raise InputError("no editor found: set $VISUAL or $EDITOR (e.g. export EDITOR=nano)")


def _edit(path: Path) -> str | None:
    """The file's text after the editor closed, or None when it was not saved."""
    import os

    before = os.stat(path).st_mtime_ns - 2_000_000_000  # an editor that saves within the same tick still counts
    os.utime(path, ns=(before, before))
    editor = _editor()
    try:
        click.edit(filename=str(path), editor=editor)
    except click.ClickException as exc:  # the editor could not start, or exited with an error
        raise InputError(f"the editor {editor!r} failed ({exc.format_message()}); set $VISUAL or $EDITOR to "
                         "an editor that works, e.g. export EDITOR=nano") from None
    if os.stat(path).st_mtime_ns == before:
        return None
    return path.read_text(encoding="utf-8")


COMMANDS = [edit]
