"""`mem ui` as a person runs it: the address on stdout (with its token), the page behind it, Ctrl-C to stop;
a port in use said plainly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import httpx
from helpers import add, ctrl_c_reaches, ok, run
from locations import FAKE_MEM


def test_the_printed_address_opens_the_page_and_ctrl_c_stops_it():
    memory_id = add("the staging database listens on port 5433")
    server = subprocess.Popen([sys.executable, str(FAKE_MEM), "ui", "--no-open"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=dict(os.environ), preexec_fn=ctrl_c_reaches)
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url
        with httpx.Client(timeout=30) as client:
            page = client.get(url, follow_redirects=True)
            assert page.status_code == 200 and memory_id in page.text and "port 5433" in page.text
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0
    assert out == ""  # the address was the only line on stdout
    assert "mem: serving" in err and "mem: stopped" in err


def test_a_port_in_use_is_said_with_what_to_do():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        result = run("ui", "--no-open", "--port", taken.getsockname()[1])
    finally:
        taken.close()
    assert result.exit_code == 2
    assert "is in use" in result.stderr and "--port 0" in result.stderr


def test_the_help_says_where_it_listens_and_how_it_is_protected():
    text = ok("ui", "--help").stdout
    assert "127.0.0.1" in text and "token" in text and "--no-open" in text and "--port" in text
