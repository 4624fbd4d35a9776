"""Only the browser that opened the address `mem ui` printed gets in, and only this page can change the
store: requests without the token, for another Host, or sent from another site are refused."""

from __future__ import annotations

import http.server
import threading

import httpx
import pytest
from fake_secrets import aws_access_key, github_token
from helpers import jsonl, ok, open_mem, run
from ui_session import capture, hook_payload, tool_payload

ROUTES = ["/", "/sessions", "/store", "/memory/ID"]


def a_memory_id() -> str:
    return jsonl(ok("ls", "--jsonl", "-t", "observation").stdout)[0]["id"]


def signed_in(served) -> httpx.Client:
    """A client that opened the address with the token: it now holds the cookie."""
    client = httpx.Client(base_url=served.base, timeout=30)
    first = client.get(served.url)
    assert first.status_code == 303 and first.headers["location"] == "/"
    assert "HttpOnly" in first.headers["set-cookie"] and "SameSite=Strict" in first.headers["set-cookie"]
    return client


def form_token(client: httpx.Client, memory_id: str) -> str:
    page = client.get(f"/memory/{memory_id}").text
    return page.split('name="form_token" value="', 1)[1].split('"', 1)[0]


@pytest.mark.parametrize("route", ROUTES)
def test_a_request_without_the_token_is_refused_and_shows_nothing_of_the_store(served, route):
    memory_id = a_memory_id()
    answer = httpx.get(served.base + route.replace("ID", memory_id), timeout=30)
    assert answer.status_code == 403
    assert "leap" not in answer.text and memory_id not in answer.text


def test_a_wrong_token_or_a_cookie_of_another_run_is_refused(served):
    assert httpx.get(f"{served.base}/?token=not-the-token", timeout=30).status_code == 403
    assert httpx.get(f"{served.base}/", cookies={f"mem_ui_{served.served.port}": "old-token"}, timeout=30).status_code == 403


def test_the_token_opens_the_page_once_then_the_cookie_does(served):
    client = signed_in(served)
    assert client.get("/").status_code == 200
    assert "leap" in client.get("/sessions").text


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost", "[::1]:{port}"])
def test_another_host_header_is_refused_even_with_the_token(served, host):
    """A DNS rebinding points another name at 127.0.0.1: the browser then sends that name as the Host."""
    client = signed_in(served)
    named = host.format(port=served.served.port)
    assert client.get("/", headers={"host": named}).status_code == 403
    assert httpx.get(served.url, headers={"host": named}, timeout=30).status_code == 403


def test_a_post_from_another_site_is_refused_and_changes_nothing(served):
    memory_id = a_memory_id()
    client = signed_in(served)
    token = form_token(client, memory_id)
    delete = f"/memory/{memory_id}/delete"
    for headers in ({"origin": "http://evil.example"}, {"origin": "null"}, {"sec-fetch-site": "cross-site"},
                    {"sec-fetch-site": "same-site"}):
        assert client.post(delete, data={"form_token": token}, headers=headers).status_code == 403
    assert client.post(delete, data={"back": "memories"}).status_code == 403  # no form token
    assert client.post(delete, data={"form_token": "0" * 64}).status_code == 403
    assert client.post(delete, content=f'{{"form_token": "{token}"}}',
                       headers={"content-type": "application/json"}).status_code == 415
    assert ok("show", memory_id, "--json")
    done = client.post(delete, data={"form_token": token}, headers={"origin": served.base})
    assert done.status_code == 303
    assert run("show", memory_id).exit_code == 4


def test_a_form_on_another_site_cannot_delete_through_the_browser(served, browser):
    """The real attack: the user's browser holds the cookie, and a page of another site posts a form to
    `mem ui`. The SameSite cookie is not sent, the Origin is another's, and the form token is unknown."""
    memory_id = a_memory_id()

    class Attacker(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = (f'<form method="post" action="{served.base}/memory/{memory_id}/delete">'
                    '<input name="form_token" value="guess"><button id="go">win a prize</button></form>').encode()
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    site = http.server.HTTPServer(("127.0.0.1", 0), Attacker)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(served.url)  # the user opened mem ui: the browser holds the cookie
        assert page.locator("li.memory").count() > 0
        page.goto(f"http://localhost:{site.server_port}/")
        with page.expect_navigation():
            page.click("#go")
        assert "refused" in page.content()
    finally:
        context.close()
        site.shutdown()
    assert ok("show", memory_id, "--json")


def test_the_address_with_the_token_never_sends_the_browser_elsewhere(served):
    answer = httpx.get(f"{served.base}//evil.example/?token={served.served.token}", timeout=30)
    assert answer.status_code == 303 and answer.headers["location"] == "/"


def test_every_answer_forbids_scripts_framing_and_caching(served):
    client = signed_in(served)
    for route in ["/", "/sessions", "/store"]:
        headers = client.get(route).headers
        assert "script-src" not in headers["content-security-policy"]
        assert "default-src 'none'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
    assert "default-src 'none'" in httpx.get(served.base, timeout=30).headers["content-security-policy"]


def test_it_listens_on_127_0_0_1_only(served):
    assert served.served.socket.getsockname()[0] == "127.0.0.1"


def test_secrets_a_hook_captured_are_shown_redacted_on_every_page(served, captured):
    key, token = aws_access_key(), github_token()
    capture([hook_payload("UserPromptSubmit", captured, "s2", prompt=f"deploy with {token}"),
             tool_payload(captured, "s2", 1, "Bash", {"command": f"aws configure set aws_access_key_id {key}"},
                          {"stdout": f"GITHUB_TOKEN={token}", "stderr": ""}),
             hook_payload("SessionEnd", captured, "s2", reason="exit")], open_mem())
    client = signed_in(served)
    shown = [client.get(route).text for route in ["/", "/sessions", "/store", "/?q=deploy+aws"]]
    shown += [client.get(f"/memory/{row['id']}").text for row in jsonl(ok("ls", "--jsonl").stdout)]
    assert all(key not in page and token not in page for page in shown)
    assert any("[REDACTED:" in page for page in shown)
