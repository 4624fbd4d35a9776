"""`mem ui`: the store as a local web page."""

from __future__ import annotations

import click

from memcli.cli.common import Env, pass_env
from memcli.errors import MemError

WEB_STACK = ("starlette", "uvicorn", "jinja2")


@click.command(name="ui")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True, metavar="N",
              help="Listen on this port of 127.0.0.1 (0: any free port).")
@click.option("--no-open", is_flag=True, help="Print the address only; do not open a browser.")
@pass_env
def ui(env: Env, port: int, no_open: bool) -> None:
    """Look at the store in a web browser: memories (search, filters, raw and compressed side by side),
    captured sessions and the digest the next one gets, savings, the work queue, doctor's findings.

    Serves this store on 127.0.0.1 only, until Ctrl-C. The address printed on stdout carries a token made
    at each start: only a browser that opened it gets in. Deleting and retagging go through the same
    library calls as `mem rm` and `mem tag`.

    \b
      mem ui                   opens the page in your browser
      mem ui --no-open --port 8765
    """
    from memcli.core.mem import Mem
    from memcli.store.folder import find_store

    try:
        from memcli.ui.launch import Served, can_open_browser, open_browser
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in WEB_STACK:
            raise
        raise MemError(f"`mem ui` needs Starlette, uvicorn and Jinja2 ({exc}); install them with: "
                       "pip install 'memcli[ui]'") from None

    served = Served(lambda: Mem.open(env.store_dir, env.providers), port)
    click.echo(served.url)
    click.echo(f"mem: serving {find_store(env.store_dir)} at http://127.0.0.1:{served.port}/ (Ctrl-C stops it)", err=True)
    if not no_open:
        if can_open_browser() and open_browser(served.url):
            click.echo("mem: opened it in your browser", err=True)
        else:
            click.echo("mem: no browser to open here: open the address above", err=True)
    served.run()
    click.echo("mem: stopped", err=True)


COMMANDS = [ui]
