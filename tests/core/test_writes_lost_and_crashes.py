"""Issue 42, "writes lost, truths forked, crashes": a kill in the middle of `mem rm`, a full disk, a provider
that does not answer, a model still running when its compression timed out, a read-only store."""

from __future__ import annotations

import pytest
from helpers import add, jsonl, ok, run

from memcli.store.files import Store


class Killed(BaseException):
    """What a SIGKILL at that point would leave: nothing after it runs (not even `finally` cleanup
    that writes)."""


@pytest.mark.parametrize("kill_after", [1, 2, 3])
def test_rm_of_a_chain_killed_after_any_unlink_never_makes_a_replaced_version_current(monkeypatch, kill_after):
    first = add("the deploy window is Monday 09:00")
    ok("update", first, "the deploy window is Tuesday 09:00")
    newest = ok("update", first, "the deploy window is Wednesday 09:00").stdout.strip()
    unlinks = []
    real_delete = Store.delete

    def delete(self, relpath):
        real_delete(self, relpath)
        unlinks.append(relpath)
        if len(unlinks) == kill_after:
            raise Killed

    monkeypatch.setattr(Store, "delete", delete)
    with pytest.raises(Killed):
        ok("rm", "-y", newest)
    monkeypatch.setattr(Store, "delete", real_delete)
    current = [m["content"] for m in jsonl(ok("ls", "--jsonl").stdout)]
    assert current == ([] if kill_after == 3 else ["the deploy window is Wednesday 09:00"])
    found = [m["content"] for m in jsonl(run("search", "deploy window", "--jsonl").stdout)]
    assert found == current
