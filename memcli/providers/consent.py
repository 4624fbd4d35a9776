"""Whether the user agreed to the provider a shared store's mem.yaml names.

A store inside a git work tree (or a project's `.mem` folder without one: an unpacked archive) has a
mem.yaml that whoever controls the repository writes. If it names a key variable (`api_key_env:
AWS_SECRET_ACCESS_KEY`) or a server off this machine, the first write in a fresh clone would send that
variable as a bearer token and every text to that host. So such a provider is used only once the user's
own config (`~/.config/mem/config.yaml`, never committed) lists it under `trusted_providers`; until then
texts are compressed here, and the write says how to agree. The same holds for the capture settings that
reach beyond the store: `capture.prompt_context` and `capture.share`.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from memcli.providers.openai_http import USER_CONFIG, read_user_config
from memcli.providers.settings import ProviderSettings
from memcli.util.paths import user_config_dir, work_tree_top

TRUSTED = "trusted_providers"
TRUSTED_PROMPT_CONTEXT = "trusted_prompt_context"
TRUSTED_SHARE = "trusted_capture_share"
_LOOPBACK = ("localhost",)


def untrusted(settings: ProviderSettings) -> str | None:
    """Why a shared store's provider may not be used yet (what to add to the user's config), or None."""
    if not needs_consent(settings):
        return None
    entry = {"base_url": _normal(settings.base_url)}
    if settings.api_key_env:
        entry["api_key_env"] = settings.api_key_env
    path = user_config_dir() / USER_CONFIG
    trusted = read_user_config(path).get(TRUSTED) or []
    if isinstance(trusted, list) and any(_same(item, entry) for item in trusted):
        return None
    what = f"{settings.base_url}" + (f" with the key in ${settings.api_key_env}" if settings.api_key_env else "")
    shown = ", ".join(f"{key}: {value}" for key, value in entry.items())
    return (f"the committed mem.yaml names the provider {what}; nothing is sent there until you agree: add "
            f"`{TRUSTED}: [{{{shown}}}]` to {path}")


def untrusted_prompt_context(store_root: Path) -> str | None:
    """Why a store's `capture.prompt_context` may not be used yet, or None. It answers every prompt of an
    assistant with the store's memories: turned on by a committed mem.yaml (anyone who can push to the
    repository), it needs the user's word, as a provider does."""
    return _unagreed(store_root, TRUSTED_PROMPT_CONTEXT, "turns on capture.prompt_context (every prompt "
                                                         "answered with this repository's memories)")


def untrusted_share(store_root: Path) -> str | None:
    """Why a store's `capture.share` (summaries or all) may not be used yet, or None. It writes every
    prompt and tool output of a developer's sessions where git takes them: turned on by a committed
    mem.yaml, it needs the developer's word; until then captured work stays on this machine."""
    return _unagreed(store_root, TRUSTED_SHARE, "sets capture.share (your captured sessions written where "
                                                "git commits them)")


def unagreed_capture(store_root: Path, options) -> list[str]:
    """Why each capture setting of the store's that needs the user's word (and is set) is not used yet:
    what `mem status` and `mem doctor` say."""
    found = [untrusted_share(store_root) if options.share != "none" else None,
             untrusted_prompt_context(store_root) if options.prompt_context else None]
    return [why for why in found if why]


def others_may_write(store_root: Path) -> bool:
    """Whether a store's mem.yaml may be someone else's: a store inside a git work tree (committed), or
    a project's `.mem` folder without one (an unpacked archive, a copy of a repository). Only the user
    store, and a store of the user's own outside any project, are exempt."""
    root = Path(store_root)
    if work_tree_top(root) is None and root.name != ".mem":
        return False
    from memcli.util.paths import user_store_dir

    return root.resolve() != user_store_dir().resolve()


def _unagreed(store_root: Path, listed_in: str, what: str) -> str | None:
    root = Path(store_root).resolve()
    if not others_may_write(Path(store_root)):
        return None
    path = user_config_dir() / USER_CONFIG
    trusted = read_user_config(path).get(listed_in) or []
    if isinstance(trusted, list) and str(root) in {str(Path(str(item)).expanduser()) for item in trusted}:
        return None
    return f"the store's mem.yaml {what}; not used until you agree: add `{listed_in}: [{root}]` to {path}"


def needs_consent(settings: ProviderSettings) -> bool:
    """A key variable, or a server that is not on this machine, named by a file others write."""
    host = urlsplit(settings.base_url or "").hostname or ""
    return bool(settings.api_key_env) or not _loopback(host)


def _loopback(host: str) -> bool:
    """Whether a URL's host is this machine: `localhost`, or a loopback address written as one (a name
    that merely starts with "127." is any host on the internet)."""
    import ipaddress

    if host in _LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _normal(url: str | None) -> str:
    return (url or "").rstrip("/")


def _same(item, entry: dict) -> bool:
    return (isinstance(item, dict) and _normal(str(item.get("base_url", ""))) == entry["base_url"]
            and item.get("api_key_env") == entry.get("api_key_env"))
