"""Finding memories: search (one query, or many from stdin) and reindex."""

from __future__ import annotations

import json
import sys

import click

from memcli.cli import common, render
from memcli.cli.common import Env, ProgressBars, echo_json, emit, pass_env
from memcli.cli.options import (
    filter_options,
    limit_option,
    make_filters,
    output_options,
    query_text,
    versions_option,
    with_raw_option,
)
from memcli.errors import NOTHING
from memcli.index.search import MODES


@click.command()
@click.argument("words", metavar="QUERY...", nargs=-1, required=True)
@limit_option(10, "How many results (-k works too).", "-k")
@filter_options
@versions_option
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True,
              help="hybrid: words and meaning; vector: meaning only; text: words only (BM25).")
@click.option("--min-score", type=float, metavar="X",
              help="Drop results scoring below X; 0 keeps every result. Hybrid scores 0-1 (by default a query "
                   "with no real match finds nothing); vector: cosine; text: BM25 (no default cut).")
@click.option("--raw", is_flag=True, help="Give the raw text instead of the compressed form.")
@with_raw_option
@output_options
@pass_env
def search(env: Env, words, limit, tags, since, until, source, all_versions, mode, min_score, raw, with_raw, fmt) -> None:
    """Find memories by words and meaning; best first. Exits 1 when nothing is found (like grep).

    Several words are one query. QUERY `-` reads one query per line from stdin and writes JSON lines, each result carrying its
    `query`, so a thousand queries cost one process and one model load. A date the query names with a
    capitalised month ("on October 13, 2023", "in March") ranks the memories of that day or month higher
    among those that match; --since/--until select by date.

    \b
      mem search "rate limiting"
      mem search how do we deploy --tag ops -n 3 --raw
      printf 'proxies\\nbilling\\n' | mem search - | jq -r .id
    """
    from memcli.core.reading import search as search_memories

    query = query_text(words)
    mem = env.mem()
    filters = make_filters(mem, tags, since, until, source, all_versions)

    def row(hit):
        return hit.memory.to_contract(raw=raw, include_raw=with_raw, score=hit.score)

    found = 0
    with ProgressBars() as progress:
        if query == "-":
            for number, line in enumerate(sys.stdin.buffer, 1):
                try:
                    text = line.decode("utf-8").strip()
                except UnicodeDecodeError as exc:  # one bad line is named; the other queries still run
                    click.echo(f"mem: skipped query line {number}: not valid UTF-8 (byte {exc.start})", err=True)
                    continue
                if not text:
                    continue
                for hit in search_memories(mem, text, k=limit, mode=mode, filters=filters, min_score=min_score,
                                           progress=progress):
                    click.echo(json.dumps({"query": text} | row(hit), ensure_ascii=False))
                    found += 1
        else:
            hits = search_memories(mem, query, k=limit, mode=mode, filters=filters, min_score=min_score,
                                   progress=progress, once=True)
            found = emit(hits, fmt, row=row,
                         human=lambda h: render.line(h.memory, env.short_id(h.memory.id), raw=raw, score=h.score))
            if not found:
                common.say_nothing_matched(getattr(hits, "under_cut", None))
    if not found:
        raise click.exceptions.Exit(NOTHING)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print {store, memories} on stdout.")
@pass_env
def reindex(env: Env, as_json: bool) -> None:
    """Rebuild every cache in .index/ from the memory files alone (catalog, words, vectors)."""
    mem = env.mem()
    with ProgressBars() as progress:
        count = mem.reindex(progress)
    if as_json:
        echo_json({"store": str(mem.store.root), "memories": count})
    click.echo(f"mem: indexed {count} memories", err=True)


COMMANDS = [search, reindex]
