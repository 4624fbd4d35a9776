"""Whether the user agreed to the provider a shared store's mem.yaml names.

A store inside a git work tree has a committed mem.yaml: whoever controls the repository writes it. If
it names a key variable (`api_key_env: AWS_SECRET_ACCESS_KEY`) or a server off this machine, the first
write in a fresh clone would send that variable as a bearer token and every text to that host. So such
a provider is used only once the user's own config (`~/.config/mem/config.yaml`, never committed) lists
it under `trusted_providers`; until then texts are compressed here, and the write says how to agree.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from memcli.providers.openai_http import USER_CONFIG, read_user_config
from memcli.providers.settings import ProviderSettings
from memcli.util.paths import user_config_dir, work_tree_top

TRUSTED = "trusted_providers"
TRUSTED_PROMPT_CONTEXT = "trusted_prompt_context"
_LOOPBACK = ("localhost", "::1")


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
    repository), it needs the user's word, as a provider does; a store outside a git work tree (the user
    store) is its owner's own."""
    root = Path(store_root).resolve()
    if work_tree_top(root) is None:
        return None
    path = user_config_dir() / USER_CONFIG
    trusted = read_user_config(path).get(TRUSTED_PROMPT_CONTEXT) or []
    if isinstance(trusted, list) and str(root) in {str(Path(str(item)).expanduser()) for item in trusted}:
        return None
    return (f"the committed mem.yaml turns on capture.prompt_context (every prompt answered with this "
            f"repository's memories); not used until you agree: add `{TRUSTED_PROMPT_CONTEXT}: [{root}]` to {path}")


def needs_consent(settings: ProviderSettings) -> bool:
    """A key variable, or a server that is not on this machine, named by a file others write."""
    host = urlsplit(settings.base_url or "").hostname or ""
    return bool(settings.api_key_env) or not (host in _LOOPBACK or host.startswith("127."))


def _normal(url: str | None) -> str:
    return (url or "").rstrip("/")


def _same(item, entry: dict) -> bool:
    return (isinstance(item, dict) and _normal(str(item.get("base_url", ""))) == entry["base_url"]
            and item.get("api_key_env") == entry.get("api_key_env"))
