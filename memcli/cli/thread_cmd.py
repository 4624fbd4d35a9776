"""`mem thread ...`: conversation threads (short-term memory) and the prompt a chat API gets from them."""

from __future__ import annotations

import json
import sys

import click

from memcli.cli.common import Env, MemGroup, emit, pass_env, say_redacted
from memcli.cli.options import output_options
from memcli.cli.render import shown
from memcli.errors import NOTHING, describe


@click.group(cls=MemGroup)
def thread():
    """Conversation threads: short-term memory that stays small.

    A thread keeps every message in plain files under threads/. `mem thread context` rebuilds the
    message list a chat API takes, within a token budget: a system message holding summaries of the
    older turns, then the recent turns verbatim. Older turns are folded into summaries in the
    background once more than `thread_summarize_every` (mem.yaml, 10) are unfolded; each summary is
    also an ordinary memory (tag `thread`), so `mem search` finds past conversations.

    \b
      id=$(mem thread new --title "trip planning")
      mem thread append $id --role user "Book the Lisbon flight for 12 May"
      mem thread context $id --budget 2000 --json     # [{"role": ..., "content": ...}, ...]
    """


def _threads(env: Env):
    from memcli.threads.storage import Threads

    return Threads(env.mem())


@thread.command()
@click.option("--title", help="A title for `mem thread ls`.")
@click.option("--json", "as_json", is_flag=True, help="Print the new thread as JSON instead of its id.")
@pass_env
def new(env: Env, title, as_json) -> None:
    """Start a thread; prints its id. Later commands take it, the short id `mem thread ls` shows, or any
    unique beginning of it."""
    info = _threads(env).create(title)
    click.echo(json.dumps(info.to_dict(), ensure_ascii=False) if as_json else info.id)


@thread.command()
@click.argument("thread_id", metavar="ID")
@click.argument("text", nargs=-1)
@click.option("--role", default="user", show_default=True,
              help="system, user, assistant or tool ('model' means assistant).")
@click.option("--name", help="Who spoke (a person's or tool's name), kept with the message.")
@click.option("--jsonl", "as_jsonl", is_flag=True,
              help="Read messages from stdin as JSON lines {role, content, name?, created_at?} (replaying a chat).")
@click.option("--json", "as_json", is_flag=True, help="Print the stored messages as JSON lines.")
@pass_env
def append(env: Env, thread_id, text, role, name, as_jsonl, as_json) -> None:
    """Add a message (TEXT, or `-`/a pipe for stdin) to thread ID; prints the message id.

    Never waits for summarising: when enough turns are unfolded, a background `mem thread summarize`
    folds the oldest ones.
    """
    from memcli.threads.storage import Threads
    from memcli.threads.summarize import fold_due

    mem = env.mem()
    threads = Threads(mem)
    thread_id = threads.resolve(thread_id)
    if as_jsonl:
        if text:
            raise click.UsageError("give the messages on stdin with --jsonl, or TEXT, not both")
        from memcli.util.textio import json_object

        drafts = [json_object(line, f"stdin line {number}") for number, line in enumerate(sys.stdin, 1) if line.strip()]
    else:
        drafts = [{"role": role, "name": name, "content": _text(text, mem.settings.max_input_bytes)}]
    stored, redacted = threads.append(thread_id, drafts)
    say_redacted(redacted)
    for message in stored:
        click.echo(json.dumps(message.to_dict(), ensure_ascii=False) if as_json else message.id)
    if fold_due(mem, thread_id):
        _summarize_later(env, thread_id)


def _text(text, limit: int) -> str:
    from memcli.cli.options import interactive
    from memcli.util.textio import read_stream

    if text == ("-",) or (not text and not interactive()):
        return read_stream(sys.stdin.buffer, "stdin", limit)
    if text:
        return " ".join(text)
    raise click.UsageError("nothing to append: give the text as arguments, pipe it in, or use --jsonl")


def _summarize_later(env: Env, thread_id: str) -> None:
    """Queue the fold and start a runner in a detached process, so the append returns now. Providers
    handed to this CLI in-process (tests, embedding programs) cannot cross into another process: the fold
    then runs here."""
    from memcli.threads.summarize import put_fold

    mem = env.mem()
    put_fold(mem, thread_id)
    if env.providers is not None:
        from memcli.threads.summarize import summarize

        try:
            summarize(mem, thread_id)
        except Exception as exc:  # the turns simply stay unfolded; the append has landed
            click.echo(f"mem: warning: could not summarise yet ({describe(exc)}); the turns stay as they are",
                       err=True)
        return
    from memcli.store.queue import start_runner

    start_runner(mem.store.root)


@thread.command(name="ls")
@output_options
@pass_env
def ls(env: Env, fmt) -> None:
    """List threads, most recently active first: short id, messages (folded), title."""
    threads = _threads(env)
    short = threads.short_ids()

    def human(info) -> str:
        return shown(f"{short[info.id]}  {info.messages:>4} msgs ({info.folded} folded)  {info.title or ''}".rstrip())

    emit(threads.list(), fmt, row=lambda info: info.to_dict(), human=human)


@thread.command()
@click.argument("thread_id", metavar="ID")
@click.option("--all", "every", is_flag=True, help="Every message on disk, folded ones too.")
@output_options
@pass_env
def show(env: Env, thread_id, every, fmt) -> None:
    """Show a thread: its summaries, then the messages not folded yet (--all: the whole history)."""
    threads = _threads(env)
    thread_id = threads.resolve(thread_id)
    messages, folds = threads.messages(thread_id), threads.folds(thread_id)
    folded_to = max((fold.last for fold in folds), default=0)
    rows: list[dict] = []
    if not every:
        rows += [{"summary": fold.memory.raw, "first": fold.first, "last": fold.last, "memory": fold.memory.id}
                 for fold in folds]
        messages = [m for m in messages if m.role == "system" or m.seq > folded_to]
    rows += [m.to_dict() for m in messages]

    def human(row: dict) -> str:
        if "summary" in row:
            return shown(f"[{row['first']}-{row['last']} summary] {' '.join(row['summary'].split())}")
        speaker = row["role"] + (f" ({row['name']})" if row.get("name") else "")
        return shown(f"[{row['seq']}] {speaker}: {row['content']}")

    emit(rows, fmt, row=dict, human=human)


@thread.command()
@click.argument("thread_id", metavar="ID")
@click.option("--budget", type=click.IntRange(min=1), default=2000, show_default=True, metavar="TOKENS",
              help="The most tokens the messages may take (content plus 4 per message for the chat framing).")
@click.option("--json", "as_json", is_flag=True, help="Print the message list as JSON, ready for a chat API.")
@pass_env
def context(env: Env, thread_id, budget, as_json) -> None:
    """The chat-API message list for thread ID within --budget tokens: the thread's system messages,
    a system message with the summaries of folded turns, then the newest turns verbatim. When the
    summaries do not all fit, their sentences stating facts (names, dates, numbers, preferences,
    decisions) go in before any chatter; stderr says what was shortened.

    \b
      mem thread context $id --json | jq '{model: "gpt-4o-mini", messages: .}' \\
        | curl -s https://api.openai.com/v1/chat/completions -H "Authorization: Bearer $KEY" \\
               -H 'Content-Type: application/json' -d @-
    """
    from memcli.threads.chat_prompt import build

    mem = env.mem()
    threads = _threads(env)
    thread_id = threads.resolve(thread_id)
    built = build(threads.messages(thread_id), threads.folds(thread_id), budget, mem.token_counter())
    if as_json:
        click.echo(json.dumps(built.messages, ensure_ascii=False))
    else:
        for message in built.messages:
            speaker = message["role"] + (f" ({message['name']})" if message.get("name") else "")
            click.echo(shown(f"{speaker}: {message['content']}"))
    click.echo(f"mem: {built.report()}", err=True)


@thread.command()
@click.argument("thread_id", metavar="ID")
@click.option("--force", is_flag=True, help="Fold every unfolded turn but the newest, due or not.")
@pass_env
def summarize(env: Env, thread_id, force) -> None:
    """Fold the oldest unfolded turns into a summary now (what `append` starts in the background; a
    fold already running is waited for); prints the summary's memory id, or nothing when nothing was due."""
    from memcli.threads.summarize import summarize as fold

    done = fold(env.mem(), thread_id, force=force, wait=True)
    if done is not None:
        click.echo(done.memory.id)
        click.echo(f"mem: folded messages {done.first}-{done.last}", err=True)
    else:
        click.echo("mem: nothing due to fold (--force folds every turn but the newest)", err=True)


@thread.command()
@click.argument("thread_id", metavar="ID")
@click.option("-y", "--yes", is_flag=True, help="Do not ask.")
@pass_env
def rm(env: Env, thread_id, yes) -> None:
    """Delete a thread's messages; its summaries stay as memories (`mem rm` them if unwanted)."""
    from memcli.cli.options import interactive

    threads = _threads(env)
    thread_id = threads.resolve(thread_id)
    short = threads.short_ids()[thread_id]
    if not yes and interactive() and not click.confirm(f"Delete thread {short}?", err=True):
        raise click.exceptions.Exit(NOTHING)
    removed = threads.remove(thread_id)
    click.echo(f"mem: removed thread {short} ({removed} messages)", err=True)


@thread.command()
@click.argument("thread_id", metavar="ID")
@pass_env
def prune(env: Env, thread_id) -> None:
    """Delete the messages already folded into summaries, for good (the summaries stay)."""
    threads = _threads(env)
    removed = threads.prune(threads.resolve(thread_id))
    click.echo(f"mem: removed {removed} folded messages", err=True)


COMMANDS = [thread]
