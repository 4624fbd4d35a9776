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


@hooks.command()
@click.argument("client", type=CLIENTS)
@click.option("--project", "scope", flag_value="project", default=True, help="This project's settings (default).")
@click.option("--user", "scope", flag_value="user", help="Your own settings, for every project.")
@click.option("--command", "command", default="mem", show_default=True,
              help="How the client runs mem (an absolute path when mem is not on its PATH).")
@click.option("--mcp", is_flag=True, help="Also register `mem mcp` as the client's MCP server `mem`.")
def install(client, scope, command, mcp) -> None:
    """Merge mem's hook entries into CLIENT's settings file; running it again changes nothing."""
    from memcli.capture.install import install as do_install
    from memcli.capture.install import install_mcp

    path, changed = do_install(client, scope, Path.cwd(), command)
    click.echo(f"{'updated' if changed else 'already installed:'} {path}", err=True)
    if mcp:
        path, changed = install_mcp(client, scope, Path.cwd(), command)
        click.echo(f"{'MCP server mem added to' if changed else 'MCP server mem already in'} {path}", err=True)


@hooks.command()
@click.argument("client", type=CLIENTS)
@click.option("--project", "scope", flag_value="project", default=True, help="This project's settings (default).")
@click.option("--user", "scope", flag_value="user", help="Your own settings.")
def uninstall(client, scope) -> None:
    """Remove mem's hook entries from CLIENT's settings file, leaving every other hook."""
    from memcli.capture.install import uninstall as do_uninstall

    path, changed = do_uninstall(client, scope, Path.cwd())
    click.echo(f"{'removed from' if changed else 'not installed in'} {path}", err=True)


@hooks.command(name="status")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def hooks_status(as_json) -> None:
    """Which clients' settings (project and user) hold mem's hooks, for which events."""
    from memcli.capture.install import status

    rows = status(Path.cwd())
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        events = ", ".join(row["events"]) or "-"
        click.echo(f"{row['client']:<12} {row['scope']:<8} {events:<60} {row['path']}")


COMMANDS = [hook, capture, hooks]
