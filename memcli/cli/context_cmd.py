"""`mem context`: the memories that best answer a query, packed into a token budget for a prompt."""

from __future__ import annotations

import click

from memcli.cli import common
from memcli.cli.common import Env, ProgressBars, echo_json, pass_env
from memcli.cli.options import (
    filter_options,
    limit_option,
    make_filters,
    query_text,
    versions_option,
)
from memcli.cli.render import shown
from memcli.util.words import counted
from memcli.errors import NOTHING
from memcli.features.budget import DEFAULT_BUDGET
from memcli.index.search import MODES


@click.command()
@click.argument("words", metavar="QUERY...", nargs=-1, required=True)
@click.option("--budget", type=click.IntRange(min=1), default=DEFAULT_BUDGET, show_default=True, metavar="TOKENS",
              help="The most tokens the printed block may take (counted by the compression model's tokenizer).")
@limit_option(20, "How many search results to consider (-k works too).", "-k")
@filter_options
@versions_option
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True,
              help="How to search, as in `mem search`.")
@click.option("--min-score", type=float, metavar="X", help="Leave out results scoring below X; 0 keeps every result (as in `mem search`).")
@click.option("--raw", is_flag=True, help="Pack the raw text instead of the compressed form.")
@click.option("--ids", is_flag=True, help="Put each memory's short id before it (what `mem show` takes).")
@click.option("--json", "as_json", is_flag=True,
              help="Print {text, tokens, budget, memories} with the chosen memories and their scores.")
@pass_env
def context(env: Env, words, budget, limit, tags, since, until, source, all_versions, mode, min_score, raw,
            ids, as_json) -> None:
    """Print the memories that best answer QUERY (several words are one query), packed into at most
    --budget tokens, ready to paste into a prompt. Exits 1 when nothing was found or nothing fits.

    Each day (UTC) is said once, `29 Nov 2026`, days in the order of their best memory; then one
    line per memory, best first: its text, the compressed form unless --raw, after its short id with
    --ids (the --json form always has the ids). The budget covers the whole block exactly as
    printed, day lines and every newline included. A memory that does not fit is skipped and smaller
    ones after it are still tried.

    \b
      mem context how do we deploy billing
      mem context "scraper limits" --budget 200 -t scraper --json | jq .tokens
    """
    from memcli.features.budget import search_within

    mem = env.mem()
    with ProgressBars() as progress:
        packed = search_within(mem, query_text(words), budget, raw=raw, ids=ids, k=limit, mode=mode, min_score=min_score,
                            progress=progress, filters=make_filters(mem, tags, since, until, source, all_versions))
    if as_json:
        echo_json(packed.to_contract())
    else:
        click.echo(shown(packed.text), nl=False)
    if packed.skipped:
        click.echo(f"mem: {counted(packed.skipped, 'more result')} did not fit in {budget} tokens", err=True)
    if not packed.hits:
        if not packed.skipped:
            common.say_nothing_matched(packed.under_cut)
        raise click.exceptions.Exit(NOTHING)


COMMANDS = [context]
