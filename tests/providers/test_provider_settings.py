"""mem.yaml's `provider` section: presets, the shorthand, and no secrets in a committed file."""

from __future__ import annotations

import json

import pytest

from memcli.config import Settings
from memcli.errors import StoreError
from memcli.providers.settings import PRESETS


def load(provider) -> Settings:
    return Settings.from_yaml_dict({"provider": provider}, "mem.yaml")


def test_local_is_the_default_and_is_written_by_init():
    assert not Settings().provider.remote
    assert Settings().to_yaml_dict()["provider"] == "local"
    assert load("local").compress_method == "prune"


@pytest.mark.parametrize("name,url,key_env,constrain", [
    ("ollama", "http://localhost:11434/v1", None, "json_schema"),
    ("llamacpp", "http://127.0.0.1:8080/v1", None, "grammar"),
    ("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "json_schema"),
    ("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", "json_schema"),
    ("anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", "none"),
])
def test_presets_fill_in_the_endpoint(name, url, key_env, constrain):
    settings = load({"name": name, "model": "some-model"})
    provider = settings.provider
    assert (provider.base_url, provider.api_key_env, provider.constrain) == (url, key_env, constrain)
    assert settings.compress_method == "facts"  # what a provider is for
    assert name in PRESETS


def test_a_preset_can_be_pointed_elsewhere_and_written_back_short():
    settings = load({"name": "ollama", "model": "qwen2.5:1.5b", "base_url": "http://gpu-box:11434/v1",
                     "max_per_minute": 10})
    assert settings.provider.base_url == "http://gpu-box:11434/v1"
    assert settings.provider.to_yaml() == {"name": "ollama", "base_url": "http://gpu-box:11434/v1",
                                           "model": "qwen2.5:1.5b", "max_per_minute": 10}


def test_a_base_url_alone_is_an_openai_compatible_server():
    provider = load({"base_url": "http://127.0.0.1:1234/v1", "model": "local-model"}).provider
    assert provider.name == "openai-compatible" and provider.remote


@pytest.mark.parametrize("provider,message", [
    ({"name": "openai", "model": "m", "api_key": "sk-x"}, "api_key_env"),
    ({"name": "openai", "model": "m", "Token": "x"}, "does not belong in mem.yaml"),
    ({"name": "openai"}, "needs a model"),
    ({"name": "nonesuch", "model": "m"}, "unknown name"),
    ({"name": "openai", "model": "m", "constrain": "regex"}, "constrain"),
    ({"name": "openai", "model": "m", "max_per_minute": 0}, "max_per_minute must be above 0"),
    ({"name": "openai", "model": "m", "circuit_max_cooldown_seconds": 1}, "below"),
    ({"base_url": "ftp://x", "model": "m"}, "http"),
])
def test_unusable_provider_settings_are_refused_with_a_reason(provider, message):
    with pytest.raises(StoreError, match=message):
        load(provider)


def test_status_of_a_local_store_says_nothing_is_sent():
    from helpers import add, ok

    add("x" * 450, "--defer")
    text = ok("status").stdout
    assert "provider:   local" in text and "1 pending, 0 failed, 0 quarantined (of 1 memories)" in text
    assert "circuit" not in text
    data = json.loads(ok("status", "--json").stdout)
    assert data["provider"] == "local" and data["pending"] == 1 and "circuit" not in data
