"""The hnswlib graph file beside the catalog: making a graph, querying it, and the stamps by which the
catalog knows the file it recorded is the one on disk (memcli.index.vectors)."""

from __future__ import annotations

import os
import zlib

HNSW_M = 16
HNSW_EF_CONSTRUCTION = 200


def forget(db, label: int) -> None:
    """A memory's vector leaves the catalog (its file went). One already folded into the graph file stays
    there, marked dead, until the next fold leaves it out."""
    db.execute("INSERT OR IGNORE INTO hnsw_dead SELECT label FROM vectors WHERE label = ? AND in_hnsw = 1", (label,))
    db.execute("DELETE FROM vectors WHERE label = ?", (label,))


def matrix(rows: list, dim: int) -> tuple[list[int], object]:
    """(labels, their vectors as one float32 matrix); no matrix when no model has made vectors yet."""
    import numpy as np

    if not dim:
        return [], None
    return [label for label, _ in rows], np.frombuffer(b"".join(vec for _, vec in rows), dtype=np.float32).reshape(-1, dim)


def knn(graph, vector, k: int, accept) -> list[tuple[int, float]]:
    """hnswlib refuses k larger than what passes the filter; ask for fewer until it answers."""
    while k > 0:
        try:
            found, distances = graph.knn_query(vector, k=k, filter=accept)
        except RuntimeError:
            k //= 2
            continue
        return [(int(label), 1.0 - float(distance)) for label, distance in zip(found[0], distances[0])]
    return []


def new_graph(dim: int, capacity: int):
    import hnswlib

    graph = hnswlib.Index(space="cosine", dim=dim)
    graph.init_index(max_elements=capacity, ef_construction=HNSW_EF_CONSTRUCTION, M=HNSW_M)
    graph.set_num_threads(2)
    return graph


def stat_record(path) -> dict | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "ctime_ns": info.st_ctime_ns, "ino": info.st_ino}


def file_record(path, crc: int) -> dict:
    return {**stat_record(path), "crc": crc}


def crc(path) -> int:
    crc = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


def stamp(path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return info.st_mtime_ns, info.st_size
