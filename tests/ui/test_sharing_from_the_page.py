"""A captured memory kept on this machine can be shared with the team store from its page, as `mem share`
does it: the page says where a memory is, and the button moves it where git takes it."""

from __future__ import annotations

from helpers import jsonl, ok, store_root
from test_access import a_memory_id, form_token, signed_in


def test_a_memory_kept_here_is_shared_from_its_page(tmp_path, captured, serving):
    (tmp_path / ".git").mkdir()  # the store is inside a repository: a team store
    served = serving()
    memory_id = a_memory_id()
    client = signed_in(served)
    page = client.get(f"/memory/{memory_id}").text
    assert "Share with the team store" in page and "Kept on this machine" in page
    assert list(store_root().glob(f"memories/local/*/*/{memory_id}.yaml"))
    done = client.post(f"/memory/{memory_id}/share", data={"form_token": form_token(client, memory_id)},
                       headers={"origin": served.base})
    assert done.status_code == 303
    assert list(store_root().glob(f"memories/[0-9]*/*/{memory_id}.yaml"))
    assert not list(store_root().glob(f"memories/local/*/*/{memory_id}.yaml"))
    assert "Shared: git takes it" in client.get(f"/memory/{memory_id}").text
    assert memory_id in {row["id"] for row in jsonl(ok("ls", "--jsonl", "-t", "observation").stdout)}
