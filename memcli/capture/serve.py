"""`mem capture serve`, started by the first hook: answers the hooks of its store on `.capture/hook.sock`
(memcli.capture.hook_socket) until `capture.serve_seconds` pass without one, doing in this warm process
what a fresh hook process would (memcli.capture.hook.run): redact, queue, answer SessionStart, start a
runner of the work queue when none runs. It loads no model (unless `capture.prompt_context` asks it to
find memories for a prompt): the runner, a process of its own at a lower priority, does that work, so a
hook never waits on it."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from pathlib import Path

from memcli.capture import hook_socket
from memcli.capture.hook import run, start_background, store_settings
from memcli.capture.options import CaptureOptions
from memcli.capture.spool import Spool
from memcli.store.queue import WorkQueue

log = logging.getLogger("memcli")


def serve(store_root: Path, linger: float, *, sleep=time.sleep) -> bool:
    """Answer the store's hooks until `linger` seconds pass without one; False when another server
    already does (or the socket cannot be made)."""
    spool = Spool(store_root)
    with spool.serve_lock() as held:
        if not held:
            return False
        server = HookServer(store_root)
        if not server.start():
            return False
        try:
            if WorkQueue(store_root).waiting():
                start_background(store_root, served=True)  # the work of the hooks that came before this server
            while time.monotonic() - server.last_event < linger:
                sleep(0.2)
        finally:
            server.stop()
    return True


class HookServer:
    def __init__(self, store_root: Path, providers=None):
        self.root = Path(store_root)
        self.providers = providers  # the models' seam (tests pass fakes); loaded only for prompt_context
        self._mem = None
        self.last_event = time.monotonic()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> bool:
        """Listen (False when the socket cannot be made: hooks then do their work themselves). Only the
        server holding the store's serve lock calls this, so a socket file already there is a dead one's."""
        path = self.root / hook_socket.SOCKET
        here = os.getcwd()
        try:
            Spool(self.root).ensure()
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            os.chdir(self.root)  # a unix socket's path is limited to about 100 bytes: bind it relative
            try:
                sock.bind(hook_socket.SOCKET)
            finally:
                os.chdir(here)
            os.chmod(path, 0o600)
            sock.listen(16)
            sock.settimeout(0.2)
        except OSError as exc:
            log.info("hooks not served: %s", exc)
            return False
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="mem-hook-server", daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._sock is not None:
            with contextlib.suppress(FileNotFoundError):
                (self.root / hook_socket.SOCKET).unlink()
            self._sock.close()

    def _serve(self) -> None:
        try:
            self._loop()
        finally:
            if self._mem is not None:  # SQLite wants its connection closed in the thread that made it
                self._mem.catalog.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            with conn:
                self._answer(conn)
            self.last_event = time.monotonic()
            self._after()

    def _after(self) -> None:
        """Once the hook has its answer: start a runner when jobs wait and none runs."""
        try:
            options = CaptureOptions.from_settings(store_settings(self.root).get("capture"))
            if options.drain == "auto" and WorkQueue(self.root).waiting():
                start_background(self.root, served=True)
        except Exception as exc:  # noqa: BLE001 - the server outlives a failed start; the next hook tries again
            log.info("no runner started: %s", exc)

    def recall(self, prompt: str, options: CaptureOptions) -> str:
        """The memories that the search finds for a prompt, within capture.prompt_tokens, as a block of
        facts; empty when nothing passes the cut-off. The models load at the first prompt and stay."""
        from memcli.core.mem import Mem
        from memcli.features.budget import search_within

        if not prompt.strip() or not self._prompt_context_agreed():
            return ""
        if self._mem is None:
            self._mem = Mem.open(self.root, self.providers)
        packed = search_within(self._mem, prompt, options.prompt_tokens, min_score=options.prompt_min_score)
        return f"Memories mem found for this prompt:\n{packed.text}" if packed.text else ""

    def _prompt_context_agreed(self) -> bool:
        from memcli.providers.consent import untrusted_prompt_context

        why = untrusted_prompt_context(self.root)
        if why:
            Spool(self.root).count("prompt context not agreed", why)
        return why is None

    def _answer(self, conn: socket.socket) -> None:
        try:
            request = hook_socket.read_request(conn)
            hook_socket.answer(conn, run(request["data"], event=request.get("event"), client=request.get("client"),
                                         store_dir=self.root, served=True, recall=self.recall))
        except (OSError, ValueError, KeyError, TypeError) as exc:  # the hook falls back to doing it itself
            log.info("a relayed hook failed: %s", exc)
