"""`mem mcp` as an assistant meets it: the MCP package's own client over stdio, the server a subprocess
running the real CLI with the fake models (tests/support/fake_mem.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
from helpers import add, memory_files, ok, open_mem, run, store_root
from locations import FAKE_MEM
from mcp_client import call, error, server_env, session, text_of

from memcli.core import reading, writing
from memcli.features.budget import DEFAULT_BUDGET
from memcli.index import catalog, changes, vectors
from memcli.store import ids

LONG = ("Rate limiting has been the hardest part of the scraper project. Amazon blocks IPs after about 30 "
        "requests per second, so we rotate through a pool of 12 residential proxies and back off "
        "exponentially starting at 250 ms. eBay is more lenient but returns HTTP 429 with a Retry-After "
        "header that we now honour. We never scrape logged-in pages. The crawler runs on a single "
        "Hetzner box with 4 cores and keeps its queue in Redis.")


def write_file_behind_its_back(text: str) -> str:
    """What a `git pull` or another machine does: a memory file appears in the store."""
    memory_id = ids.new_id()
    path = store_root() / "memories" / "2026" / "01" / f"{memory_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"id: {memory_id}\ncreated_at: '2026-01-02T03:04:05Z'\nraw: {text}\n")
    return memory_id


def test_a_client_writes_searches_lists_gets_and_deletes():
    async def scenario(client):
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == {"memory_write", "memory_search", "memory_list", "memory_get", "memory_delete",
                         "memory_context", "memory_update", "thread_append", "thread_context", "thread_list"}
        short = await call(client, "memory_write", content="We moved billing from Heroku to Fly.io in March",
                           tags=["infra", "Billing"], source="notes/infra.md")
        assert short == {"id": short["id"], "duplicate": False, "written_by": "mcp:test-assistant",
                         "tags": ["infra", "billing"], "source": "notes/infra.md"}
        again = await call(client, "memory_write", content="we moved billing from heroku to fly.io in march")
        assert again["duplicate"] and again["id"] == short["id"]
        long = await call(client, "memory_write", content=LONG, tags="scraper")
        assert long["optimized"]
        stored = ok("export").stdout
        assert "mcp:test-assistant" in stored and '["infra", "billing"]' in stored

        found = (await call(client, "memory_search", query="Amazon proxies rate limit"))["memories"]
        assert found[0]["id"] == long["id"] and set(found[0]) == {"id", "content", "optimized", "tags",
                                                                 "created_at", "score"}
        assert found[0]["content"] != LONG and len(found[0]["content"]) < len(LONG)
        both = (await call(client, "memory_search", query="Amazon proxies rate limit", include_raw=True))["memories"]
        assert both[0]["content_raw"] == LONG and both[0]["content"] == found[0]["content"]
        raw = (await call(client, "memory_search", query="Amazon proxies rate limit", raw=True, limit=1))["memories"]
        assert len(raw) == 1 and raw[0]["content"] == LONG and "content_raw" not in raw[0]
        tagged = (await call(client, "memory_search", query="moved", tags=["infra"]))["memories"]
        assert [m["id"] for m in tagged] == [short["id"]]
        assert tagged[0]["source"] == "notes/infra.md" and "optimized" not in tagged[0]
        lines = await text_of(client, "memory_search", query="Amazon proxies rate limit", limit=1)
        day, line = lines.splitlines()
        assert re.fullmatch(r"\d{1,2} [A-Z][a-z]{2} 20\d\d", day)
        handle, content = line.split(" ", 1)
        assert long["id"].endswith(handle) and len(handle) == 3 and content == found[0]["content"]
        got = (await call(client, "memory_get", id=handle.lower()))["memories"]
        assert [m["id"] for m in got] == [long["id"]]

        listed = (await call(client, "memory_list"))["memories"]
        assert [m["id"] for m in listed] == [long["id"], short["id"]]
        assert [m["id"] for m in (await call(client, "memory_list", limit=1))["memories"]] == [long["id"]]
        assert [m["id"] for m in (await call(client, "memory_list", tags=["scraper"]))["memories"]] == [long["id"]]

        got = (await call(client, "memory_get", id=long["id"][:10].lower()))["memories"]
        assert [m["id"] for m in got] == [long["id"]] and got[0]["content"] == found[0]["content"]
        assert (await call(client, "memory_get", id=long["id"], raw=True))["memories"][0]["content"] == LONG

        assert (await call(client, "memory_delete", ids=short["id"]))["deleted"] == [short["id"]]
        assert "no memory" in await error(client, "memory_get", id=short["id"])
        return long["id"]

    long_id = session(scenario)
    # What the assistant did is what the shell sees.
    cli = [json.loads(line) for line in ok("export").stdout.splitlines()]
    assert [(m["id"], m["written_by"]) for m in cli] == [(long_id, "mcp:test-assistant")]


def test_the_server_sees_files_changed_behind_its_back():
    kept = add("Postgres 16 upgrade is scheduled for Friday")
    doomed = add("The staging cluster is called kestrel")

    async def scenario(client):
        assert len((await call(client, "memory_list"))["memories"]) == 2
        assert (await call(client, "memory_search", query="kestrel staging"))["memories"][0]["id"] == doomed
        pulled = write_file_behind_its_back("Kubernetes cluster upgrade to 1.31 next sprint")
        next(p for p in memory_files() if p.stem == doomed).unlink()
        from_shell = subprocess.run([sys.executable, FAKE_MEM, "add", "Grafana dashboards moved to ops-2"],
                                    env=os.environ | server_env(), capture_output=True, text=True, check=True)
        found = (await call(client, "memory_search", query="kubernetes upgrade"))["memories"]
        assert found[0]["id"] == pulled
        assert (await call(client, "memory_search", query="grafana dashboards"))["memories"][0]["id"] == \
            from_shell.stdout.strip()
        listed = {m["id"] for m in (await call(client, "memory_list"))["memories"]}
        assert listed == {kept, pulled, from_shell.stdout.strip()}
        assert "no memory" in await error(client, "memory_get", id=doomed)

    session(scenario)


def test_errors_come_back_as_tool_errors_and_the_server_keeps_serving():
    first = add("deploy notes one")
    add("deploy notes two")

    async def scenario(client):
        assert "no memory" in await error(client, "memory_get", id="7ZZZZZZZ")
        assert "not a memory id" in await error(client, "memory_delete", ids="not-an-id!")
        assert "ambiguous" in await error(client, "memory_get", id=first[:4])
        assert "too short" in await error(client, "memory_get", id=first[-2:])
        assert "empty" in await error(client, "memory_write", content="   ")
        assert "spaces" in await error(client, "memory_write", content="x", tags=["two words"])
        assert "empty" in await error(client, "memory_search", query=" ")
        assert "budget" in await error(client, "memory_context", query="deploy", budget=0)
        assert "limit" in await error(client, "memory_list", limit=0)
        assert (await client.call_tool("no_such_tool", {})).is_error
        return (await call(client, "memory_get", id=first))["memories"][0]["id"]

    assert session(scenario) == first


def test_every_tool_declares_annotations_and_refuses_what_it_does_not_take():
    add("deploy notes one")

    async def scenario(client):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name, tool in tools.items():
            hints = tool.annotations
            assert tool.output_schema["type"] == "object" and hints.open_world_hint is False, name
            assert "\n    " not in tool.description, name
            assert tool.input_schema.get("additionalProperties") is False, name
            # Whole: read and checked without resolving references (clients that do not follow them).
            assert "$ref" not in json.dumps([tool.input_schema, tool.output_schema]), name
        reads = {"memory_search", "memory_list", "memory_get", "memory_context", "thread_context", "thread_list"}
        assert {name for name, tool in tools.items() if tool.annotations.read_only_hint} == reads
        assert {name for name, tool in tools.items() if tool.annotations.destructive_hint} == {"memory_delete"}
        assert tools["memory_write"].annotations.idempotent_hint and tools["memory_delete"].annotations.idempotent_hint

        refused = await error(client, "memory_search", query="deploy", limt=3)
        assert refused.startswith("`limt` is not an argument of this tool (it takes query, limit,")
        assert await error(client, "memory_search", limit=3) == "`query` is required."
        too_many = await error(client, "memory_search", query="deploy", limit=500)
        assert too_many == "`limit`: input should be less than or equal to 100."
        assert "mode" in await error(client, "memory_search", query="deploy", mode="fuzzy")
        assert "no memory" in await error(client, "memory_get", id="7ZZZZZZZ")
        for message in (refused, too_many):
            assert "pydantic" not in message and "http" not in message and "Error executing" not in message

    session(scenario)


def test_the_default_read_costs_less_than_the_raw_one():
    """On compressed memories the reader pays less by default than for the raw prose, counted in the
    text a model reads and in what the result itself reports (from the stored counts)."""
    for n in range(6):  # the fake compressor drops each "the": enough of them to outweigh a block's dates and ids
        add(f"Note {n} about the scraper, the proxies, the queue and the crawler of the project. " + LONG)

    async def scenario(client):
        default = await client.call_tool("memory_search", {"query": "scraper proxies", "limit": 5})
        raw = await client.call_tool("memory_search", {"query": "scraper proxies", "limit": 5, "raw": True})
        words = [len(result.content[0].text.split()) for result in (default, raw)]
        assert words[0] < words[1]
        assert default.content[0].text == default.content[0].text.strip()  # not a token spent on blanks
        assert default.structured_content["tokens"] < default.structured_content["raw_tokens"]
        assert raw.structured_content["tokens"] == raw.structured_content["raw_tokens"] \
            == default.structured_content["raw_tokens"]
        packed = await call(client, "memory_context", query="scraper proxies")
        assert packed["budget"] == DEFAULT_BUDGET and packed["tokens"] < packed["raw_tokens"]

    session(scenario)


def test_a_nonsense_query_returns_nothing_by_default_and_the_closest_with_min_score_0():
    for text in ("We moved billing from Heroku to Fly.io in March", LONG, "The staging cluster is called kestrel"):
        add(text)

    async def scenario(client):
        nothing = await client.call_tool("memory_search", {"query": "zebra quantum banana"})
        assert nothing.structured_content["memories"] == [] and "min_score: 0" in nothing.content[0].text
        closest = await call(client, "memory_search", query="zebra quantum banana", min_score=0)
        assert len(closest["memories"]) == 3
        packed = await client.call_tool("memory_context", {"query": "zebra quantum banana"})
        assert packed.structured_content["memories"] == [] and packed.structured_content["text"] == ""
        assert (await call(client, "memory_context", query="zebra quantum banana", min_score=0))["memories"]

    session(scenario)


def test_list_pages_filters_and_delete_takes_several_ids():
    ids = [add(f"release note {n}", "-t", "ops" if n % 2 else "dev") for n in range(5)]

    async def scenario(client):
        first = await call(client, "memory_list", limit=2)
        assert [m["id"] for m in first["memories"]] == ids[::-1][:2] and first["next_offset"] == 2
        second = await call(client, "memory_list", limit=2, offset=first["next_offset"])
        last = await call(client, "memory_list", limit=2, offset=second["next_offset"])
        assert [m["id"] for m in second["memories"] + last["memories"]] == ids[::-1][2:]
        assert "next_offset" not in last
        assert [m["id"] for m in (await call(client, "memory_list", tags="ops"))["memories"]] == [ids[3], ids[1]]
        assert (await call(client, "memory_list", since="2000-01-01", until="2001-01-01"))["memories"] == []
        assert (await call(client, "memory_search", query="release", since="yesterday", limit=10))["memories"]
        assert "not a time" in await error(client, "memory_list", since="not a time")
        deleted = await call(client, "memory_delete", ids=[ids[0][:12], ids[1]])
        assert deleted == {"deleted": ids[:2]}
        assert "no memory" in await error(client, "memory_delete", ids=[ids[2], "7ZZZZZZZ"])
        return [m["id"] for m in (await call(client, "memory_list"))["memories"]]

    assert session(scenario) == ids[:1:-1]


def test_memory_context_keeps_to_the_budget():
    for n in range(12):
        add(f"deploy checklist item {n}: " + "check the billing queue and the proxies " * (n % 4 + 1))

    async def scenario(client):
        sizes = []
        for budget in (1, 9, 15, 40, 100, 1000):
            packed = await call(client, "memory_context", query="deploy billing proxies", budget=budget)
            assert packed["budget"] == budget
            assert packed["tokens"] == len(packed["text"].split()) <= budget
            assert len(packed["memories"]) == len(packed["text"].splitlines()) - bool(packed["memories"])
            scores = [m["score"] for m in packed["memories"]]
            assert scores == sorted(scores, reverse=True)
            sizes.append(len(packed["memories"]))
            assert packed.get("skipped", 0) == 12 - sizes[-1]
            note = await text_of(client, "memory_context", query="deploy billing proxies", budget=budget)
            assert note.endswith(f"({12 - sizes[-1]} more results did not fit in {budget} tokens)") == (sizes[-1] < 12)
        assert sizes[0] == 0 and sizes == sorted(sizes) and sizes[-1] == 12

    session(scenario)


def test_the_client_name_comes_from_the_handshake_of_an_older_client():
    async def scenario(client):
        return await call(client, "memory_write", content="written over the initialize handshake")

    assert session(scenario, client="Claude Desktop", mode="legacy")["written_by"] == "mcp:Claude Desktop"


def test_stdout_carries_only_the_protocol_and_logs_go_to_stderr():
    """Spoken by hand, as a desktop assistant does: JSON-RPC lines in, JSON-RPC lines out."""
    add("a note before the server starts")
    broken = store_root() / "memories" / "2026" / "11" / f"{ids.new_id()}.yaml"
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("{{{ not yaml")  # every refresh warns about it, on stderr
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "hand-rolled", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "memory_write", "arguments": {"content": "spoken by hand"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "memory_get", "arguments": {"id": "0000"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "memory_list", "arguments": {}}},
    ]
    server = subprocess.Popen([sys.executable, FAKE_MEM, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=os.environ | server_env(), text=True)
    replies, lines = {}, []
    for message in messages:
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        while "id" in message and message["id"] not in replies:
            lines.append(server.stdout.readline())
            reply = json.loads(lines[-1])
            assert reply["jsonrpc"] == "2.0"
            replies[reply.get("id")] = reply
    server.stdin.close()
    lines += server.stdout.readlines()
    stderr = server.stderr.read()
    assert server.wait(timeout=60) == 0, stderr
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)
    assert replies[1]["result"]["serverInfo"]["name"] == "mem"
    assert replies[2]["result"]["structuredContent"]["written_by"] == "mcp:hand-rolled"
    assert replies[3]["result"]["isError"] is True
    assert len(replies[4]["result"]["structuredContent"]["memories"]) == 2
    assert "spoken by hand" in replies[4]["result"]["content"][0]["text"]
    assert broken.name in stderr
    assert "Traceback" not in stderr
    assert sorted(path.name for path in (store_root() / ".index").glob("catalog.sqlite*")) == ["catalog.sqlite"]


def test_a_missing_mcp_package_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    monkeypatch.delitem(sys.modules, "memcli.mcp.server", raising=False)
    result = run("mcp")
    assert result.exit_code == 3
    assert "pip install 'memcli[mcp]'" in result.stderr and result.stdout == ""


class Clock:
    """Stands in for the catalog's `time` module: the clock it schedules full looks by moves by hand;
    the nanosecond clock it compares folder mtimes with is real."""

    def __init__(self):
        self.now = time.time()

    def time(self) -> float:
        return self.now

    def time_ns(self) -> int:
        return time.time_ns()


def settle(root: Path) -> None:
    """As if the store's folders last changed an hour ago (a just-changed folder is never trusted)."""
    past = time.time() - 3600
    for folder in [root / "memories", *(p for p in (root / "memories").rglob("*") if p.is_dir())]:
        os.utime(folder, (past, past))


def test_a_long_lived_mem_catches_up_with_other_writers(monkeypatch):
    """The library side of the server's promise: a `Mem` open for hours still sees the files as they are."""
    clock = Clock()
    monkeypatch.setattr(catalog, "time", clock)
    monkeypatch.setattr(changes, "time", clock)
    first = add("first note about caching")
    mem = open_mem()
    assert [m.id for m in reading.listing(mem)] == [first]
    settle(store_root())
    mem.refresh()

    second = write_file_behind_its_back("second note about caching")
    assert [m.id for m in reading.listing(mem)] == [first], "a one-shot command looks at the files once"
    mem.refresh()
    assert {m.id for m in reading.listing(mem)} == {first, second}
    next(p for p in memory_files() if p.stem == first).unlink()
    mem.refresh()
    assert [m.id for m in reading.listing(mem)] == [second]

    settle(store_root())
    mem.refresh()
    edited = next(p for p in memory_files() if p.stem == second)
    edited.write_text(edited.read_text().replace("caching", "queueing"))  # in place: no folder changes
    clock.now += 0.1
    mem.refresh()
    assert "caching" in reading.get(mem, second).raw, "right after a full look, only the folders are looked at"
    clock.now += 1.0
    mem.refresh()
    assert "queueing" in reading.get(mem, second).raw


def test_a_long_lived_mem_finds_by_meaning_what_others_wrote_and_not_what_they_deleted():
    """What a search keeps between queries (the vectors outside the graph, word counts, short ids) is
    kept only until the index changes, by this process or another."""
    first = add("rotate the scraper proxies every hour")
    mem = open_mem()
    assert [hit.memory.id for hit in reading.search(mem, "scraper proxies", mode="vector", k=1)] == [first]
    second = add("whiskers the cat likes tuna")
    mem.refresh()
    assert [hit.memory.id for hit in reading.search(mem, "cat tuna", mode="vector", k=1)] == [second]
    ok("rm", second, "-y")
    mem.refresh()
    assert second not in [hit.memory.id for hit in reading.search(mem, "cat tuna", mode="vector", k=5)]


def test_a_long_lived_mem_checks_a_touched_graph_file_and_searches_it(monkeypatch):
    """A graph file whose stat moved (touch, a hard-link backup) but not its bytes is checked and used,
    not searched around by brute force until the index next changes (found by a hostile review)."""
    from memcli.index.filters import Filters

    monkeypatch.setattr(vectors, "FOLD_AT", 3)
    notes = {text: add(text) for text in ("deploy billing on friday", "rotate the scraper proxies",
                                          "whiskers the cat likes tuna", "postgres upgrade next sprint")}
    tagged = add("the cat sleeps on the radiator", "-t", "x")
    ok("reindex")
    mem = open_mem()
    assert [hit.memory.id for hit in reading.search(mem, "cat", mode="vector", k=1, filters=Filters(tags=("x",)))] == [tagged]
    os.utime(store_root() / ".index" / "vectors.hnsw")
    for _ in range(2):
        assert reading.search(mem, "cat tuna", mode="vector", k=1)[0].memory.id == notes["whiskers the cat likes tuna"]
    assert mem.vectors._graph is not None


def test_a_long_lived_mem_survives_a_reindex_by_another_process(monkeypatch):
    monkeypatch.setattr(vectors, "FOLD_AT", 3)  # the vectors go into the graph file, whose labels a rebuild renumbers
    texts = ["deploy billing on friday", "rotate the scraper proxies", "whiskers the cat likes tuna",
             "postgres upgrade next sprint"]
    notes = {text: add(text) for text in texts}
    mem = open_mem()
    assert reading.search(mem, "scraper proxies", mode="vector")[0].memory.id == notes["rotate the scraper proxies"]
    next(p for p in memory_files() if p.stem == notes[texts[0]]).unlink()
    shutil.rmtree(store_root() / ".index")
    ok("reindex")
    mem.refresh()
    for text in texts[1:]:
        assert reading.search(mem, text, mode="vector", k=1)[0].memory.id == notes[text]
    later = writing.write(mem, writing.Text("a note written after the reindex")).memory
    assert later.id in ok("search", "written after the reindex", "--mode", "text", "--jsonl").stdout


def test_the_server_looks_at_every_file_when_idle_not_while_answering(monkeypatch):
    """A file rewritten in place (no folder changes) is found by the periodic look at every file, which
    costs seconds at 100k memories: a request leaves it to the server's idle moments unless it is very late."""
    from memcli.mcp.server import REQUEST_PATIENCE, Worker

    clock = Clock()
    monkeypatch.setattr(catalog, "time", clock)
    monkeypatch.setattr(changes, "time", clock)
    memory_id = add("the cache expires after 5 minutes")
    worker = Worker(open_mem())  # its idle thread is not started: each run_one() below is one idle moment

    def read() -> str:
        return anyio.run(worker, lambda mem: reading.get(mem, memory_id).raw)

    try:
        settle(store_root())
        assert read() == "the cache expires after 5 minutes"
        edited = memory_files()[0]
        edited.write_text(edited.read_text().replace("5 minutes", "15 minutes"))
        clock.now += 1.0  # the full look is due (a small store's costs little: due after 0.2 s)
        assert read() == "the cache expires after 5 minutes", "a request is answered without it"
        assert worker.idle.run_one() is False  # an idle moment: nothing to compress, but the files were looked at
        assert read() == "the cache expires after 15 minutes"

        settle(store_root())
        edited.write_text(edited.read_text().replace("15 minutes", "an hour"))
        clock.now += 0.2 * REQUEST_PATIENCE + 1
        assert read() == "the cache expires after an hour", "a server never idle still sees it, later"
    finally:
        worker.close()


def test_a_thousand_tag_filters_and_an_empty_delete_get_plain_answers():
    kept = add("deploy notes one", "-t", "ops")
    many = [f"t{n}" for n in range(1200)]

    async def scenario(client):
        assert (await call(client, "memory_list", tags=many))["memories"] == []
        assert (await call(client, "memory_search", query="deploy notes", tags=many))["memories"] == []
        assert [m["id"] for m in (await call(client, "memory_list", tags=["ops", "ops"]))["memories"]] == [kept]
        assert "no memory id given" in await error(client, "memory_delete", ids=[])

    session(scenario)
    assert [p.stem for p in memory_files()] == [kept]
