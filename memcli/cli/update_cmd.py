"""`mem update`: a new version of a memory, the old one kept as history (memcli/core/writing.py, memcli/index/versions.py)."""

from __future__ import annotations

import click

from memcli.cli import completion
from memcli.cli.common import Env, ProgressBars, after_write, compress_options, pass_env, say_compressed, say_written
from memcli.cli.options import read_text, tag_option, text_options


@click.command()
@click.argument("memory_id", metavar="ID", shell_complete=completion.ids)
@text_options
@tag_option("Tags of the new version (default: those of the version it replaces).")
@click.option("--json", "as_json", is_flag=True, help="Print the new version as JSON instead of its id.")
@pass_env
def update(env: Env, memory_id, text, file, source, no_compress, defer, local_only, no_gitignore, tags,
           as_json) -> None:
    """Replace memory ID with TEXT (`-` or a pipe reads stdin): a new version with a new id.

    The old version stays on disk as history (`mem show ID --history`); search, ls and context
    return only the current one unless --all-versions. After a git merge left two current versions
    (a fork, which `mem doctor` names), updating either replaces both. The same text as now
    changes nothing.

    \b
      mem update 8ZK "staging Postgres listens on 5433"
      mem show 8ZK --raw | sed s/5432/5433/ | mem update 8ZK -
    """
    from memcli.core.writing import update as update_memory

    mem = env.mem()
    body, source = read_text(mem, text, file, source, no_gitignore)
    with ProgressBars(delay=0) as progress:
        options = compress_options(mem, no_compress=no_compress, defer=defer, progress=progress)
        written = update_memory(mem, memory_id, body, tags=tags or None, source=source, local_only=local_only,
                                compressing=options)
    after_write(mem, written, options, defer)
    say_compressed(written, progress.enabled)
    if written.unchanged:
        click.echo(f"mem: no change: {mem.catalog.short_id(written.memory.id)} already says that", err=True)
    say_written(written, as_json, mem.catalog.short_id)


COMMANDS = [update]
