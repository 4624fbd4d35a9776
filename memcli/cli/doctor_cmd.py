"""`mem doctor`: check a store (files, ids, index, models, git, compression) and say how to fix it."""

from __future__ import annotations

import click

from memcli.cli.common import Env, ProgressBars, echo_json, pass_env
from memcli.errors import NOTHING

MARKS = {"ok": click.style("ok  ", fg="green"), "info": click.style("info", fg="blue"),
         "fail": click.style("FAIL", fg="red", bold=True)}


@click.command()
@click.option("--json", "as_json", is_flag=True,
              help="Print {store, healthy, findings: [{check, ok, level, message, fix}]}.")
@click.option("--fix", is_flag=True, help="Also remove the temp files that interrupted writes left.")
@click.option("--check-vectors", "sample", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="Also embed N memories afresh and compare them with their vectors in the vector cache.")
@pass_env
def doctor(env: Env, as_json: bool, fix: bool, sample: int) -> None:
    """Check the store and say how to fix each problem. Exits 0 when healthy, 1 otherwise.

    Looks for unreadable memory files (e.g. git merge conflicts), the same id in two files, memories
    that meaning search cannot find yet, models that are not installed, an .index/ that git would
    commit, and compressions that failed; memories waiting for `mem compress --pending` are reported
    as information, not a problem. Like a search, it first catches the index up with the files
    (after a git pull, say), embedding what has no vector yet. It reads every page of the caches and
    rebuilds a damaged one, and names the temp files that killed writes left (--fix removes them).
    It says how many memories the vector cache (vectors/, committed with the memories) covers and
    which of its files it ignores as damaged; --check-vectors N checks a sample against the model.
    """
    from memcli.features.doctor import diagnose

    mem = env.mem()
    with ProgressBars() as progress:
        findings = diagnose(mem, progress, fix=fix, sample=sample)
    healthy = all(finding.ok for finding in findings)
    if as_json:
        echo_json({"store": str(mem.store.root), "healthy": healthy,
                   "findings": [finding.to_dict() for finding in findings]})
    else:
        for finding in findings:
            mark = MARKS[finding.level]
            click.echo(f"{mark}  {finding.check:<12} {finding.message}")
            if finding.fix:
                click.echo(f"      {'':<12} fix: {finding.fix}")
    problems = sum(not finding.ok for finding in findings)
    click.echo(f"mem: {problems} problem{'s' if problems != 1 else ''} found" if problems else "mem: the store is healthy",
               err=True)
    if not healthy:
        raise click.exceptions.Exit(NOTHING)


COMMANDS = [doctor]
