""".memignore: gitignore syntax, several sources, explained like `git check-ignore -v`."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from locations import ROOT

from memcli.errors import StoreError
from memcli.privacy.ignore import IgnoreRules


def make(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root


@pytest.fixture
def store(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "store"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


def test_builtin_defaults_apply_without_any_file(store):
    make(store, {".env": "", ".env.local": "", "keys/server.pem": "", "id_rsa": "", "id_rsa.pub": "",
                 ".git/config": "", "node_modules/x/y.js": "", "__pycache__/a.pyc": "", ".index/catalog.sqlite": "",
                 "certs/client.p12": "", "tls.key": "", "notes.md": "", "environment.md": ""})
    rules = IgnoreRules.load(store)
    for name in (".env", ".env.local", "keys/server.pem", "id_rsa", "id_rsa.pub", ".git/config",
                 "node_modules/x/y.js", "__pycache__/a.pyc", ".index/catalog.sqlite", "certs/client.p12", "tls.key"):
        assert rules.is_ignored(name), name
    assert not rules.is_ignored("notes.md")
    assert not rules.is_ignored("environment.md")
    assert rules.match("notes.md") is None


def test_builtin_defaults_ignore_names_in_any_case(store):
    """`.ENV` is `.env` on macOS and Windows; on Linux a file so named holds the same kind of secrets."""
    names = (".ENV", ".Env", ".Env.Local", "KEYS/SERVER.PEM", "ID_RSA", "Id_Ed25519.pub", ".GIT/config", "TLS.Key",
             ".PGPASS", ".Bash_History", "Home/.AWS/Credentials")
    make(store, {name: "" for name in names} | {"ENVIRONMENT.md": ""})
    rules = IgnoreRules.load(store)
    for name in names:
        assert rules.is_ignored(name), name
    assert not rules.is_ignored("ENVIRONMENT.md")


def test_a_path_written_with_a_leading_double_slash_is_decided_as_with_one(store):
    """POSIX keeps a leading `//` apart; a command word like `file://localhost/...`'s path must still be decided."""
    rules = IgnoreRules.load(store)
    assert rules.is_ignored("/" + str(store / ".env"))
    assert not rules.is_ignored("/" + str(store / "notes.md"))


def test_a_memignore_minds_case_where_the_file_system_does(store, monkeypatch):
    from memcli.privacy import patterns

    make(store, {".memignore": "secrets.txt\n", "Secrets.txt": "", "secrets.txt": ""})
    assert IgnoreRules.load(store).is_ignored("secrets.txt")
    assert not IgnoreRules.load(store).is_ignored("Secrets.txt")  # as git does on Linux
    monkeypatch.setattr(patterns, "case_blind", lambda file: True)  # macOS, Windows: the same file
    assert IgnoreRules.load(store).is_ignored("Secrets.txt")


def test_case_blindness_is_read_from_the_file_system(store):
    from memcli.privacy.patterns import case_blind

    make(store, {".memignore": ""})
    assert case_blind(store / ".memignore") is False  # this file system (tmp on Linux) minds case
    make(store, {".MEMIGNORE": ""})
    assert case_blind(store / ".memignore") is False  # two files, not one under two names


def test_match_explains_the_builtin_rule(store):
    make(store, {".env": ""})
    found = IgnoreRules.load(store).match(".env")
    assert found.ignored and found.pattern == ".env*" and found.source is None and found.line == 2
    assert str(found) == "built-in defaults:2:.env*\t.env"


def test_match_names_file_and_line_like_git_check_ignore(store):
    make(store, {".memignore": "# logs are noise\n\n*.log\n", "notes/debug.log": ""})
    found = IgnoreRules.load(store).match("notes/debug.log")
    assert found.ignored
    assert found.source == store / ".memignore" and found.line == 3 and found.pattern == "*.log"
    assert str(found) == ".memignore:3:*.log\tnotes/debug.log"


def test_negation_reincludes_and_says_so(store):
    make(store, {".memignore": "*.log\n!keep.log\n", "a.log": "", "keep.log": ""})
    rules = IgnoreRules.load(store)
    assert rules.is_ignored("a.log")
    kept = rules.match("keep.log")
    assert not kept.ignored and kept.pattern == "!keep.log" and kept.line == 2
    assert not rules.is_ignored("keep.log")


def test_later_pattern_wins(store):
    make(store, {".memignore": "!keep.log\n*.log\n", "keep.log": ""})
    assert IgnoreRules.load(store).is_ignored("keep.log")


def test_directory_pattern_matches_folders_only(store):
    make(store, {".memignore": "build/\n", "build/out.md": "", "src/build/x.md": "", "docs/build": "a file"})
    rules = IgnoreRules.load(store)
    assert rules.is_ignored("build")
    assert rules.is_ignored("build/out.md")
    assert rules.is_ignored("src/build/x.md")
    assert not rules.is_ignored("docs/build")


def test_file_under_excluded_folder_cannot_be_reincluded(store):
    # git semantics: once a folder is excluded, nothing inside it is looked at.
    make(store, {".memignore": "build/\n!build/keep.md\n", "build/keep.md": ""})
    found = IgnoreRules.load(store).match("build/keep.md")
    assert found.ignored and found.pattern == "build/" and found.line == 1


def test_excluding_folder_contents_lets_a_file_back_in(store):
    make(store, {".memignore": "build/*\n!build/keep.md\n", "build/keep.md": "", "build/out.md": ""})
    rules = IgnoreRules.load(store)
    assert not rules.is_ignored("build/keep.md")
    assert rules.is_ignored("build/out.md")


def test_anchored_pattern_matches_only_at_its_folder(store):
    make(store, {".memignore": "/only-root.txt\n", "only-root.txt": "", "sub/only-root.txt": ""})
    rules = IgnoreRules.load(store)
    assert rules.is_ignored("only-root.txt")
    assert not rules.is_ignored("sub/only-root.txt")


def test_pattern_with_inner_slash_is_anchored(store):
    make(store, {".memignore": "docs/private.md\n", "docs/private.md": "", "x/docs/private.md": ""})
    rules = IgnoreRules.load(store)
    assert rules.is_ignored("docs/private.md")
    assert not rules.is_ignored("x/docs/private.md")


def test_double_star_patterns(store):
    make(store, {".memignore": "docs/**/draft-*.md\n**/tmp\nlogs/**\n!logs/summary.md\n",
                 "docs/draft-1.md": "", "docs/a/b/draft-2.md": "", "docs/a/final.md": "",
                 "x/y/tmp/z.md": "", "tmp": "", "logs/2026/11.md": "", "logs/summary.md": ""})
    rules = IgnoreRules.load(store)
    assert rules.is_ignored("docs/draft-1.md")
    assert rules.is_ignored("docs/a/b/draft-2.md")
    assert not rules.is_ignored("docs/a/final.md")
    assert rules.is_ignored("x/y/tmp/z.md")
    assert rules.is_ignored("tmp")
    assert rules.is_ignored("logs/2026/11.md")
    # `logs/**` matches what is inside logs/, not logs/ itself, so a file in it can come back.
    assert not rules.is_ignored("logs/summary.md")


def test_builtin_default_can_be_reincluded(store):
    make(store, {".memignore": "!.env.example\n", ".env.example": "", ".env": ""})
    rules = IgnoreRules.load(store)
    assert not rules.is_ignored(".env.example")
    assert rules.is_ignored(".env")


def test_user_file_applies_and_store_file_overrides_it(store, isolated):
    make(isolated / "config", {"ignore": "*.private.md\n"})
    make(store, {".memignore": "!team.private.md\n", "me.private.md": "", "team.private.md": ""})
    rules = IgnoreRules.load(store)
    found = rules.match("me.private.md")
    assert found.ignored and found.source == isolated / "config" / "ignore" and found.line == 1
    assert not rules.is_ignored("team.private.md")


def test_nested_memignore_applies_to_its_own_subtree(tmp_path, monkeypatch):
    walk = make(tmp_path / "notes", {
        ".memignore": "*.tmp\n",
        "sub/.memignore": "# local rules\n!special.tmp\nsecret.md\n/local.md\n",
        "sub/special.tmp": "", "other/special.tmp": "", "sub/secret.md": "", "secret.md": "",
        "sub/local.md": "", "sub/deeper/local.md": "", "sub/deeper/secret.md": "",
    })
    monkeypatch.chdir(walk)
    rules = IgnoreRules.load(None, walk)
    assert not rules.is_ignored("sub/special.tmp")
    assert rules.is_ignored("other/special.tmp")
    assert rules.is_ignored("sub/secret.md")
    assert rules.is_ignored("sub/deeper/secret.md")
    assert not rules.is_ignored("secret.md")
    assert rules.is_ignored("sub/local.md")
    assert not rules.is_ignored("sub/deeper/local.md")
    assert str(rules.match("sub/secret.md")) == "sub/.memignore:3:secret.md\tsub/secret.md"


def test_store_rules_apply_to_a_walk_inside_the_store(store):
    make(store, {".memignore": "/projects/a/skip.md\n", "projects/a/skip.md": "", "projects/a/ok.md": "",
                 "projects/a/.memignore": "*.bak\n", "projects/a/x.bak": ""})
    rules = IgnoreRules.load(store, store / "projects" / "a")
    assert dict((p.name, m is not None and m.ignored) for p, m, _ in rules.walk()) == {
        "ok.md": False, "skip.md": True, "x.bak": True}


def test_walk_root_rules_and_store_rules_combine(tmp_path, monkeypatch):
    store = make(tmp_path / "store", {".memignore": "*.draft\n/top.md\n"})
    walk = make(tmp_path / "elsewhere", {".memignore": "*.log\n", "a.draft": "", "b.log": "", "c.md": "",
                                         "top.md": ""})
    monkeypatch.chdir(tmp_path)
    rules = IgnoreRules.load(store, walk)
    # The store's .memignore applies to every path, the walked folder's to its own tree.
    assert rules.is_ignored(walk / "a.draft")
    assert rules.is_ignored(walk / "b.log")
    assert rules.is_ignored(store / "x.draft")
    assert not rules.is_ignored(walk / "c.md")
    assert rules.is_ignored(store / "top.md") and not rules.is_ignored(walk / "top.md")  # anchored to its folder


def test_walk_skips_ignored_folders_without_entering_them(tmp_path):
    walk = make(tmp_path / "proj", {
        ".memignore": "build/\n",
        "build/.memignore": "!*\n", "build/out.md": "",
        ".git/HEAD": "", "README.md": "", "docs/a.md": "", "docs/b.md": "", ".env": "",
    })
    seen = [(p.relative_to(walk).as_posix(), m.ignored if m else None) for p, m, _ in IgnoreRules.load(None, walk).walk()]
    assert seen == [
        (".env", True),
        (".git", True),
        ("README.md", None),
        ("build", True),
        ("docs/a.md", None),
        ("docs/b.md", None),
    ]


def test_walk_gives_the_same_order_every_time(tmp_path):
    walk = make(tmp_path / "w", {f"d{i}/f{j}.md": "" for i in range(4) for j in range(4)})
    first = [p for p, _, _ in IgnoreRules.load(None, walk).walk()]
    assert first == [p for p, _, _ in IgnoreRules.load(None, walk).walk()]
    assert first == sorted(first)


def test_walk_does_not_follow_links_out_of_the_tree(tmp_path):
    outside = make(tmp_path / "outside", {"credentials.md": "secret"})
    walk = make(tmp_path / "w", {"a.md": ""})
    (walk / "creds.md").symlink_to(outside / "credentials.md")
    (walk / "linked").symlink_to(outside, target_is_directory=True)
    (walk / "alias.md").symlink_to(walk / "a.md")
    found = {p.name: m for p, m, _ in IgnoreRules.load(None, walk).walk()}
    assert list(found) == ["a.md", "alias.md", "creds.md", "linked"]
    assert found["a.md"] is None and found["alias.md"] is None
    for name in ("creds.md", "linked"):
        assert found[name].ignored and found[name].source_name == "links" and "--follow-links" in found[name].pattern


def test_paths_absolute_or_relative_to_cwd(store, monkeypatch):
    make(store, {".memignore": "*.log\n", "sub/x.log": ""})
    rules = IgnoreRules.load(store)
    monkeypatch.chdir(store / "sub")
    assert rules.is_ignored("x.log")
    assert rules.is_ignored(store / "sub" / "x.log")
    assert rules.match("x.log").path == Path("x.log")


def test_paths_outside_every_root_still_get_the_defaults(tmp_path, store):
    elsewhere = make(tmp_path / "elsewhere", {"id_ed25519": "", "project/.git/config": "", "notes.md": ""})
    rules = IgnoreRules.load(store)
    assert rules.is_ignored(elsewhere / "id_ed25519")
    assert rules.is_ignored(elsewhere / "project" / ".git" / "config")
    assert not rules.is_ignored(elsewhere / "notes.md")


def test_unreadable_memignore_is_a_store_error(store):
    (store / ".memignore").write_bytes(b"*.log\n\xff\xfe\n")
    with pytest.raises(StoreError, match=r"\.memignore"):
        IgnoreRules.load(store)


def test_walk_needs_a_walk_root(store):
    with pytest.raises(ValueError):
        list(IgnoreRules.load(store).walk())


def test_the_documented_example_behaves_as_its_comments_say(store):
    example = ROOT / ".memignore.example"
    (store / ".memignore").write_text(example.read_text())
    rules = IgnoreRules.load(store)
    expected = {
        "a/b/debug.log": True, "release-notes.log": False, ".env.example": False, ".env": True,
        "build/x.md": True, "docs/build.md": False, "TODO.private.md": True, "sub/TODO.private.md": False,
        "docs/internal/plan.md": True, "x/docs/internal/plan.md": False, "secrets-1.md": True,
        "secrets-12.md": False, "backup-2024.md": True, "notes/a/b/draft-1.md": True, "notes/final.md": False,
        "src/tmp/x.md": True, "logs/2026.md": True, "logs/summary.md": False, "private/diary.md": True,
        "private/README.md": False, "config/credentials.json": True, "vault.kdbx": True,
    }
    assert {name: rules.is_ignored(store / name) for name in expected} == expected


def test_invalid_pattern_names_file_and_line(store):
    make(store, {".memignore": "*.log\n!\n"})
    with pytest.raises(StoreError, match=r"\.memignore:2: invalid ignore pattern '!'"):
        IgnoreRules.load(store)


PATTERN_POOL = ["*.log", "!keep.md", "build/", "/only.txt", "docs/**", "!docs/keep.md", "**/tmp", "a/*", "!a/b",
                "deep/**/x.log", "!*.log", "b", "/a/", "*.md", "!notes.md", "docs/*", "!.env.example", "tmp/",
                "a/**", "!a/keep.md", "?.log", "[ab]", "**/docs/", "deep/*/", "x.log/", "!build/"]
NAME_POOL = ["a", "b", "build", "docs", "keep.md", "x.log", "notes.md", "tmp", "deep", "only.txt", ".env.example"]


@pytest.mark.parametrize("seed", range(3))
def test_decisions_agree_with_git_check_ignore(tmp_path, seed):
    """Random trees with random root and nested rule files, judged by mem and by git itself."""
    import subprocess

    from memcli.privacy.ignore import DEFAULTS

    rng = random.Random(seed)
    for trial in range(15):
        root = tmp_path / f"t{trial}"
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / ".git" / "info" / "exclude").write_text("\n".join(DEFAULTS) + "\n")
        files = []
        for _ in range(25):
            name = "/".join(rng.choice(NAME_POOL) for _ in range(rng.randint(1, 4)))
            path = root / name
            if any(p.is_file() for p in [path, *path.parents]) or path.is_dir():
                continue
            make(root, {name: "x"})
            files.append(name)
        folders = sorted({str(Path(f).parent) for f in files if "/" in f})
        for folder in [".", *rng.sample(folders, min(2, len(folders)))]:
            rules_text = "\n".join(rng.sample(PATTERN_POOL, rng.randint(1, 6))) + "\n"
            make(root / folder, {".memignore": rules_text, ".gitignore": rules_text})
        out = subprocess.run(["git", "-C", str(root), "check-ignore", "--no-index", "--stdin"],
                             input="\n".join(files), capture_output=True, text=True).stdout
        by_git = {name: name in out.splitlines() for name in files}
        rules = IgnoreRules.load(None, root)
        assert {name: rules.is_ignored(root / name) for name in files} == by_git
