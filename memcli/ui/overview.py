"""The store page: what compression saves by kind (as a bar chart drawn in SVG on the server), the work
queue (waiting jobs and parked ones, with why), the vector cache and doctor's findings.

Each comes from the feature the CLI shows it with: `mem stats` (memcli.features.savings), `mem status` and
`mem queue` (memcli.features.status.work_queue, memcli.store.queue), `mem doctor` (memcli.features.doctor,
whose vector-cache findings get their own section).
"""

from __future__ import annotations

CHART_WIDTH = 640
LABEL_WIDTH = 120
BAR_ROOM = 340  # the longest bar; the rest of the width holds its figures
ROW_HEIGHT = 30
WAITING_SHOWN = 200


def store_page(mem) -> dict:
    from memcli.features.doctor import diagnose
    from memcli.features.savings import store_savings
    from memcli.features.status import work_queue
    from memcli.store.queue import WorkQueue

    savings = store_savings(mem) if mem.readable() else None
    findings = [finding.to_dict() for finding in diagnose(mem)]
    waiting = WorkQueue(mem.store.root).waiting()
    return {"root": str(mem.store.root), "private": mem.store.private, "savings": savings,
            "chart": chart(savings["by_kind"]) if savings else None,
            "queue": work_queue(mem), "waiting_total": len(waiting),
            "waiting": [{"name": job.name, "kind": job.kind, "at": job.at, "tries": job.tries, "error": job.error,
                         "not_before": job.not_before} for job in waiting[:WAITING_SHOWN]],
            "cache": [f for f in findings if f["check"] == "cache"],
            "doctor": [f for f in findings if f["check"] != "cache"]}


def chart(by_kind: dict[str, dict]) -> dict:
    """The geometry of the savings chart: per kind, most raw tokens first, a bar of its raw tokens and over
    it one of the tokens a reader gets, both to the scale of the largest kind."""
    kinds = sorted(by_kind.items(), key=lambda item: (-item[1]["raw_tokens"], item[0]))
    largest = max((row["raw_tokens"] for _, row in kinds), default=0) or 1
    bars = []
    for n, (kind, row) in enumerate(kinds):
        bars.append({"kind": kind, "y": n * ROW_HEIGHT, "raw_width": round(BAR_ROOM * row["raw_tokens"] / largest, 1),
                     "read_width": round(BAR_ROOM * row["tokens"] / largest, 1), "memories": row["memories"],
                     "raw_tokens": row["raw_tokens"], "tokens": row["tokens"], "saved_percent": row["saved_percent"]})
    return {"bars": bars, "width": CHART_WIDTH, "height": max(len(bars), 1) * ROW_HEIGHT, "label": LABEL_WIDTH,
            "figures_x": LABEL_WIDTH + BAR_ROOM + 8, "row": ROW_HEIGHT}
