"""`mem status`: the compression provider, the queue and the worker's circuit breaker."""

from __future__ import annotations

import datetime as dt
import json

import click

from memcli.cli.common import Env, pass_env


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@pass_env
def status(env: Env, as_json: bool) -> None:
    """Where compression runs, what waits for it, and whether the server is being spared.

    \b
      mem status              provider, model, pending / failed / quarantined, circuit, work queue
      mem compress --pending  run what waits
    """
    from memcli.features.status import status as gather

    info = gather(env.mem())
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    where = info["provider"] if info["provider"] == "local" else f"{info['provider']} at {info['base_url']}"
    click.echo(f"provider:   {where}")
    click.echo(f"model:      {info['model']} ({info['method']})"
               + (f"; falls back to {info['fallback_model']} here" if "fallback_model" in info else ""))
    click.echo(f"compression: {info['pending']} pending, {info['failed']} failed, {info['quarantined']} quarantined"
               f" (of {info['memories']} memories)")
    if "circuit" in info:
        circuit = info["circuit"]
        if info["closes_at"]:
            circuit += f" until {_clock(info['closes_at'])} (nothing is sent until then)"
        click.echo(f"circuit:    {circuit}")
        click.echo(f"requests:   {info['requests_last_minute']} in the last minute")
        error = info["last_error"]
        if error:
            click.echo(f"last error: {error['reason']} ({_clock(error['at'])})")
    if "capture" in info:
        _capture(info["capture"])
    _work(info["work"])


def _capture(capture: dict) -> None:
    for why in capture.get("not_agreed", []):
        click.echo(f"not agreed: {why}")
    if "last_event" not in capture:  # no hook has run yet
        return
    last = _clock(capture["last_event"]) if capture["last_event"] else "never"
    clients = ", ".join(f"{name} {_clock(at)}" for name, at in capture["by_client"].items())
    click.echo(f"capture:    last event {last}" + (f" ({clients})" if len(capture["by_client"]) > 1 else "")
               + ("; hook server running" if capture["serving"] else ""))
    counts = capture["counts"]
    if counts:
        click.echo("drained:    " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if capture["errors"]:
        click.echo("problems:   " + ", ".join(f"{k} {v}" for k, v in sorted(capture["errors"].items()))
                   + (f" (last: {capture['last_error']})" if capture["last_error"] else ""))


def _work(work: dict) -> None:
    waiting = ", ".join(f"{n} {kind}" for kind, n in sorted(work["waiting"].items())) or "nothing"
    click.echo(f"work queue: {waiting} waiting" + (f", {sum(work['parked'].values())} parked" if work["parked"] else ""))
    for job in work["parked_jobs"]:
        click.echo(f"parked:     {job['name']} after {job['tries']} tries: {job['reason']}")
    if work["parked_jobs"]:
        click.echo("            `mem queue retry --all` tries them again, `mem queue drop --all` forgets them")
    if work["bad"]:
        from memcli.store.queue import set_aside_why

        click.echo(f"set aside:  {set_aside_why(work['bad'])}")


def _clock(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


COMMANDS = [status]
