"""The work a write leaves in the queue (memcli.store.queue), and how it is done: a memory's compression
(by the local model or a server) and the vectors a write could not make.

Each handler can be run again at any moment safely: a compression is saved only over the text it was
made from, and only while the memory still waits for it (unless the job asks to redo it: `mem compress
--failed|--all|ID`); vectors are made only for memories that have none. A server that does not answer
leaves the memory pending and the job waiting (Later), with a pause that doubles, never parked.

`run_now` is how a one-shot command gets its own jobs done before it returns (`mem add` without
--defer, `mem compress`); a long-lived process or a background runner takes the rest
(memcli.features.work).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from memcli.core import reading
from memcli.core.compressing import COMPRESSING, CompressOptions, compression_of
from memcli.core.persist import count_raw_tokens, save_compression
from memcli.errors import InputError, InvalidMemory, Refused, describe
from memcli.store.queue import Job, Later, WorkQueue, run_jobs

if TYPE_CHECKING:
    from memcli.core.mem import Mem
    from memcli.store.memory import Memory

COMPRESS, EMBED = "compress", "embed"
LATER_FIRST_S, LATER_MAX_S = 30.0, 900.0  # a server that is down is asked again after 30 s, 60 s, ... 15 min

Library = Callable[[Callable[[], Any]], Any]  # runs a step where the library may touch the store


def direct(step: Callable[[], Any]) -> Any:
    return step()


def queue_of(mem: Mem) -> WorkQueue:
    return WorkQueue(mem.store.root)


def permanent(exc: BaseException) -> bool:
    """An error that another try cannot cure: the job's input is refused or malformed."""
    return isinstance(exc, (InputError, InvalidMemory, Refused))


def put_compression(mem: Mem, memory: Memory, options: CompressOptions, *, redo: bool = False) -> str:
    """Queue the compression of a stored memory; the job's name. `redo`: even when it is not pending."""
    data = {"id": memory.id, "redo": redo}
    data.update({k: v for k, v in (("method", options.method), ("ratio", options.ratio)) if v is not None})
    queue = queue_of(mem)
    queue.put(COMPRESS, memory.id, data, scope=f"memory-{memory.id}", replace=True)
    return f"{COMPRESS}-{memory.id}"


def put_vectors(mem: Mem) -> None:
    """Vectors some memories lack (the model could not run at their write): one job makes them all."""
    queue_of(mem).put(EMBED, "vectors", {}, scope="vectors")


def handlers(mem: Mem, *, library: Library = direct, progress=None,
             outcome: dict[str, int] | None = None) -> dict[str, Callable[[Job], None]]:
    """The handlers of the core's kinds. `library` runs the steps that touch the store (a server's one
    library thread); the compression itself runs where the handler is called. `outcome` counts the
    statuses compressions end in."""
    return {COMPRESS: lambda job: _compress(mem, job, library, progress, outcome),
            EMBED: lambda job: library(mem.index_vectors)}


def run_now(mem: Mem, names: Iterable[str], *, progress=None, outcome: dict[str, int] | None = None) -> None:
    """Do these jobs of this process's write now, waiting for a runner that holds one of them."""
    names = list(names)
    if names:
        run_jobs(queue_of(mem), handlers(mem, progress=progress, outcome=outcome), names=names, wait=True,
                 permanent=permanent, describe=describe)


def _compress(mem: Mem, job: Job, library: Library, progress, outcome: dict[str, int] | None) -> None:
    memory = library(lambda: reading.as_on_disk(mem, job.data["id"]))
    if memory is None or not (job.data.get("redo") or memory.status == "pending"):
        return  # removed, or compressed meanwhile (by hand, another runner, a person's edit)
    options = CompressOptions(method=job.data.get("method"), ratio=job.data.get("ratio"), progress=progress)
    compressed, info = compression_of(mem, memory, options)
    count_raw_tokens(mem, memory.raw, info, batch=False)
    saved = library(lambda: save_compression(mem, memory, compressed, info))
    if saved is not None and outcome is not None:
        outcome[info["status"]] = outcome.get(info["status"], 0) + 1
    if saved is not None and info.get("status") == "pending":
        waited = int(job.data.get("waited", 0))
        job.data["waited"] = waited + 1
        raise Later(min(LATER_FIRST_S * 2 ** waited, LATER_MAX_S), info.get("reason", "the server did not answer"))


def recompress(mem: Mem, memories: list[Memory], *, options: CompressOptions = CompressOptions(),
               progress=None) -> dict[str, int]:
    """(Re)compress memories (`mem compress`): each one queued, then done here one by one and saved as
    soon as it is done, so an interrupted run loses nothing and a re-run picks up what is left. Returns
    how many ended in each status."""
    outcome: dict[str, int] = {}
    names = [put_compression(mem, memory, options, redo=memory.status != "pending") for memory in memories]
    total = len(names)
    if progress:
        progress(COMPRESSING, 0, total)
    for done, name in enumerate(names, 1):
        run_now(mem, [name], outcome=outcome)
        if progress:
            progress(COMPRESSING, done, total)
    return outcome
