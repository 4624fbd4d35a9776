"""The key that seals this machine's queue and capture state: made once, the same for every process that
asks for it first at the same instant, and never removed by mem."""

from __future__ import annotations

import os

import pytest

from memcli.errors import NotOurs
from memcli.util import own_files


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    monkeypatch.setattr(own_files, "_keys", {})
    return tmp_path / "config" / own_files.KEY_FILE


def test_two_first_uses_at_once_agree_on_one_key(fresh, monkeypatch):
    winner = b"f" * 64
    real_link = os.link

    def other_process_first(src, dst):  # another process links its key in between our check and our link
        with open(dst, "wb") as out:
            out.write(winner)
        return real_link(src, dst)

    monkeypatch.setattr(own_files.os, "link", other_process_first)
    assert own_files.key() == winner
    assert os.listdir(fresh.parent) == [own_files.KEY_FILE]  # no temp file left


def test_a_short_key_file_is_an_error_and_stays(fresh):
    fresh.parent.mkdir()
    fresh.write_bytes(b"abc")
    with pytest.raises(NotOurs, match="remove it"):
        own_files.key()
    assert fresh.read_bytes() == b"abc"


def test_a_key_is_made_owner_only_once(fresh):
    first = own_files.key()
    own_files._keys.clear()
    assert own_files.key() == first and len(first) == 64
    assert fresh.stat().st_mode & 0o777 == 0o600


def test_a_file_system_without_hard_links_still_gets_one_key(fresh, monkeypatch):
    def no_links(src, dst):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(own_files.os, "link", no_links)
    made = own_files.key()
    own_files._keys.clear()
    assert own_files.key() == made and os.listdir(fresh.parent) == [own_files.KEY_FILE]
