"""The physical floor of a search and of a write: the same model work done directly with llama_cpp and
hnswlib, without mem. bench/search_latency.py runs it in the same run as mem and prints ratios.

    .venv/bin/python bench/floor.py cold STORE_DIR QUERY    # one fresh process: import, load, one query

Same model file, same thread count and OpenMP wait policy as mem's own loader, so only mem's own
work (catalog, BM25, fusion, records, JSON, MCP) separates the two.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path


def load_embedder():
    """A plain llama_cpp.Llama on the store's embedding model file."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import llama_cpp

    from memcli.config import Settings
    from memcli.providers.llama import THREADS, resolve

    path = resolve(Settings().embed_model, "embed")
    return llama_cpp.Llama(str(path), embedding=True, n_ctx=0, n_batch=1024, n_ubatch=1024, n_threads=THREADS,
                           n_threads_batch=THREADS, verbose=False)


def load_graph(store: Path, dim: int = 384):
    """The store's hnsw file; a small store keeps its vectors in SQLite only, so then a graph of those."""
    import sqlite3

    import hnswlib
    import numpy as np

    graph = hnswlib.Index(space="cosine", dim=dim)
    path = store / ".index" / "vectors.hnsw"
    if path.is_file():
        graph.load_index(str(path))
        return graph
    with sqlite3.connect(store / ".index" / "catalog.sqlite") as db:
        rows = db.execute("SELECT label, vec FROM vectors").fetchall()
    graph.init_index(max_elements=len(rows), ef_construction=200, M=16)
    graph.add_items(np.frombuffer(b"".join(v for _, v in rows), dtype=np.float32).reshape(len(rows), dim),
                    [label for label, _ in rows])
    return graph


def query(llama, graph, text: str, k: int = 10):
    import numpy as np

    vector = np.asarray(llama.embed(text), dtype=np.float32)
    vector /= np.linalg.norm(vector)
    return graph.knn_query(vector, k=k)


def per_query(store: Path, queries: list[str]) -> float:
    """Median seconds of embed + knn (k=10), warm, in this process."""
    llama, graph = load_embedder(), load_graph(store)
    for text in queries[:5]:
        query(llama, graph, text)
    samples = []
    for text in queries:
        began = time.perf_counter()
        query(llama, graph, text)
        samples.append(time.perf_counter() - began)
    llama.close()
    return statistics.median(samples)


def embed_rate(texts: list[str], batch: int = 32, *, sentences: bool = False) -> float:
    """Texts per second of plain `Llama.embed` in batches of `batch`: of each text whole, or (`sentences`)
    of the sentences a memory's vector is made of (memcli.index.sentence_vectors), the work a write does."""
    from memcli.index.sentence_vectors import units

    inputs = [unit for text in texts for unit in units(text)] if sentences else texts
    llama = load_embedder()
    llama.embed(inputs[:batch])
    began = time.perf_counter()
    for start in range(0, len(inputs), batch):
        llama.embed(inputs[start:start + batch])
    rate = len(texts) / (time.perf_counter() - began)
    llama.close()
    return rate


if __name__ == "__main__" and sys.argv[1:2] == ["cold"]:
    store_dir, text = Path(sys.argv[2]), sys.argv[3]
    query(load_embedder(), load_graph(store_dir), text)
