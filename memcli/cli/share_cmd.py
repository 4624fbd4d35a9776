"""`mem share`: what capture kept on this machine, moved to where the team's git takes it (docs/teams.md)."""

from __future__ import annotations

import click

from memcli.cli import completion
from memcli.cli.common import Env, echo_json, pass_env
from memcli.errors import NOTHING


@click.command()
@click.argument("handles", metavar="[ID...]", nargs=-1, shell_complete=completion.ids)
@click.option("--session", metavar="SESSION", help="Everything one captured session made: its observations, "
                                                   "summary and thread (the id in their source session/<id>).")
@click.option("--dry-run", is_flag=True, help="Say what would be shared; move nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print {memories, threads} shared as JSON.")
@pass_env
def share(env: Env, handles, session, dry_run, as_json) -> None:
    """Share captured memories and threads with the team: move them from this machine's memories/local/ and
    threads/local/ (which git leaves out) to where `git add` takes them. A memory is shared with every
    version of it; a thread by its id. Exits 1 when there was nothing kept here to share.

    \b
      mem share 8ZK                      a session summary or an observation
      mem share --session 4f2c-...       what one captured session made
      mem share --session 4f2c-... --dry-run
    """
    from memcli.features.sharing import share as do_share

    if not handles and session is None:
        raise click.UsageError("name what to share: memory or thread ids, or --session")
    mem = env.mem()
    shared = do_share(mem, list(handles), session=session, dry_run=dry_run)
    if as_json:
        echo_json(shared.to_dict())
    verb = "would share" if dry_run else "shared"
    click.echo(f"mem: {verb} {len(shared.memories)} memories and {len(shared.threads)} threads"
               + ("" if dry_run else "; commit them with git to hand them to the team"), err=True)
    if not shared.memories and not shared.threads:
        raise click.exceptions.Exit(NOTHING)


COMMANDS = [share]
