"""`mem hook`, `mem capture drain` and `mem hooks install|uninstall|status`: what coding assistants do,
captured through their hooks (docs/capture.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memcli.cli.common import Env, MemGroup, pass_env


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument("event", required=False)
@click.option("--client", help="Who sends the event (claude-code, codex, gemini); guessed from the payload.")
@click.pass_obj
def hook(env: Env, event, client) -> None:
    """Take one hook payload (JSON on stdin) from a coding assistant: always exits 0, prints only what the
    event's protocol asks for (SessionStart: the context of earlier sessions).

    \b
      mem hooks install claude-code       # writes the hooks for you
      echo '{"hook_event_name": "SessionStart", "session_id": "s1", "cwd": "'$PWD'"}' | mem hook
    """
    from memcli.capture.relay import handle

    data = sys.stdin.read() if not sys.stdin.isatty() else ""
    out = handle(data, event, client, str(env.store_dir) if env.store_dir else None)
    if out:
        click.echo(out)


@click.group(cls=MemGroup)
def capture():
    """Captured hook events: turning them into memories now, and the hook server."""


@capture.command()
@click.option("--linger", type=float, default=0.0, show_default=True,
              help="Wait this many seconds for more events before stopping.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@pass_env
def drain(env: Env, linger, as_json) -> None:
    """Turn the captured events waiting in the work queue into observations, session threads and summaries
    now (`mem queue run` does this and every other kind of waiting work)."""
    from memcli.capture.event_jobs import KINDS
    from memcli.features.work import Work

    counts = Work(env.mem(), KINDS).run(linger=linger)
    if as_json:
        click.echo(json.dumps(dict(counts)))
    elif counts.get("busy") and len(counts) == 1:
        click.echo("another runner is working on this store's captured events", err=True)
    else:
        click.echo(", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing waiting")


@capture.command()
@pass_env
def serve(env: Env) -> None:
    """Answer this store's hooks from one warm process until capture.serve_seconds pass without one (the
    first hook starts it; hooks work without it, only slower)."""
    from memcli.capture.options import CaptureOptions
    from memcli.capture.serve import serve as run_serve

    mem = env.mem()
    if not run_serve(mem.store.root, CaptureOptions.from_settings(mem.settings.capture).serve_seconds):
        click.echo("another server answers this store's hooks", err=True)


@click.group(cls=MemGroup)
def hooks():
    """Install mem's hooks in Claude Code, Codex CLI or Gemini CLI settings (other hooks are kept)."""


CLIENTS = click.Choice(["claude-code", "codex", "gemini"])
# What each client needs besides the settings file before it runs the hooks (docs/capture.md).
TRUST = {
    "codex": "Codex runs these hooks only once you trust them: start `codex`, type /hooks and trust mem's "
             "entries (in automation, `codex exec --dangerously-bypass-hook-trust` runs them for that run); "
             "a project's .codex/ is read only in a project you trusted",
    "gemini": "Gemini CLI runs a project's hooks only in a trusted folder (it lists them once, the first time)",
}


@hooks.command()
@click.argument("client", type=CLIENTS)
@click.option("--project", "scope", flag_value="project", default=True, help="This project's settings (default).")
@click.option("--user", "scope", flag_value="user", help="Your own settings, for every project.")
@click.option("--command", "command", default="mem", show_default=True,
              help="How the client runs mem (an absolute path when mem is not on its PATH).")
@click.option("--mcp", is_flag=True, help="Also register `mem mcp` as the client's MCP server `mem`.")
@click.option("--force", is_flag=True, help="Write the hooks even when the command does not run here.")
def install(client, scope, command, mcp, force) -> None:
    """Merge mem's hook entries into CLIENT's settings file; running it again changes nothing.

    \b
    It first runs `COMMAND --version` through a shell, as the client will, and stops when that is not mem
    (pass --command with the full path, e.g. --command "$(command -v mem)", or --force)."""
    from memcli.capture.install import check_command, install_mcp, machine_path
    from memcli.capture.install import install as do_install
    from memcli.errors import InputError

    version = check_command(command)
    if version is None and not force:
        raise InputError(f"`{command} --version` does not run mem from a shell here, so {client} could not run "
                         "the hooks either: pass --command with mem's full path (e.g. --command "
                         "\"$(command -v mem)\"), or --force to write them anyway")
    if version is None:
        click.echo(f"warning: `{command} --version` does not run mem here; writing the hooks anyway", err=True)
    done = do_install(client, scope, Path.cwd(), command)
    click.echo(f"{'updated' if done.changed else 'already installed:'} {done.path}", err=True)
    if mcp:
        added = install_mcp(client, scope, Path.cwd(), command)
        click.echo(f"{'MCP server mem added to' if added.changed else 'MCP server mem already in'} {added.path}",
                   err=True)
        if client == "claude-code" and scope == "project":
            click.echo("note: Claude Code asks once before it starts a project's .mcp.json servers: run `claude` "
                       "and approve mem", err=True)
    place = machine_path(command)
    if scope == "project" and place:
        click.echo(f"note: {done.path} is the project's, shared through git, and now names {place}, a path on "
                   "this machine: teammates need mem there too (or install with --user instead)", err=True)
    if client in TRUST:
        click.echo(f"note: {TRUST[client]}", err=True)


@hooks.command()
@click.argument("client", type=CLIENTS)
@click.option("--project", "scope", flag_value="project", default=True, help="This project's settings (default).")
@click.option("--user", "scope", flag_value="user", help="Your own settings.")
def uninstall(client, scope) -> None:
    """Remove what `hooks install` added to CLIENT's settings (its hooks, and the MCP server `mem` when it
    is the one --mcp registers), leaving everything else as it was."""
    from memcli.capture.install import uninstall as do_uninstall
    from memcli.capture.install import uninstall_mcp

    done = do_uninstall(client, scope, Path.cwd())
    click.echo(f"{'removed from' if done.changed else 'not installed in'} {done.path}", err=True)
    for event in done.skipped:
        click.echo(f"note: hooks.{event} in {done.path} is not a list; mem left it as it is", err=True)
    server = uninstall_mcp(client, scope, Path.cwd())
    if server.changed:
        click.echo(f"MCP server mem removed from {server.path}", err=True)


@hooks.command(name="status")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_env
def hooks_status(env: Env, as_json) -> None:
    """Which clients' settings (project and user) hold mem's hooks, for which events, whether their command
    runs, whether Codex trusts them, and when this store last heard from each client."""
    from memcli.capture.install import check_command, status
    from memcli.capture.spool import Spool
    from memcli.store.where import find_store

    rows = status(Path.cwd())
    seen = Spool(find_store(env.store_dir, Path.cwd())).last_seen()
    runs = {c: check_command(c) is not None for row in rows for c in row["commands"]}
    for row in rows:
        row["command_runs"] = all(runs[c] for c in row["commands"]) if row["commands"] else None
        row["last_event"] = seen.get(row["client"])
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        events = ", ".join(row["events"]) or "-"
        click.echo(f"{row['client']:<12} {row['scope']:<8} {events:<60} {row['path']}")
        if row["events"]:
            click.echo(f"{'':<22}{_health(row)}")


def _health(row: dict) -> str:
    """One line under an installed row: does it run, is it trusted, when did the last event come."""
    import datetime as dt

    parts = ["command runs" if row["command_runs"] else f"command does not run here: {', '.join(row['commands'])}"]
    if "trusted" in row:
        trusted, total = row["trusted"].split("/")
        parts.append("Codex has a trust record for each" if trusted == total else
                     f"not trusted by Codex ({trusted} of {total}: trust them in `codex` with /hooks)")
    last = row["last_event"]
    parts.append("last event " + (dt.datetime.fromtimestamp(last, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
                                  if last else "never (in this store)"))
    return "; ".join(parts)


COMMANDS = [hook, capture, hooks]
