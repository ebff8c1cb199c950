"""Secrets planted where users keep them, and the grep that finds them anywhere (shared by the
secrets and hostile-repository tests)."""

from __future__ import annotations

from pathlib import Path

FLAG_KEY = "sk-flag-PLANTED-0001-abcdefgh"
MODELS_KEY = "sk-models-PLANTED-0002-abcdefgh"
ENV_NAME_KEY = "sk-envname-PLANTED-0003-abcdefgh"
HEADER_TOKEN = "hdr-PLANTED-0004-abcdefgh"
ENV_SECRETS = {
    "OPENAI_API_KEY": "sk-openai-PLANTED-0005-abcdefgh",
    "ANTHROPIC_API_KEY": "sk-ant-PLANTED-0006-abcdefgh",
    "GITHUB_TOKEN": "ghp_PLANTED-0007-abcdefgh",
    "MY_SERVICE_SECRET": "svc-PLANTED-0008-abcdefgh",
    "PROXY_CRED": ENV_NAME_KEY,  # not a secret name: secret because models.json uses it as a key
}
PLANTED = [FLAG_KEY, MODELS_KEY, ENV_NAME_KEY, HEADER_TOKEN, *ENV_SECRETS.values()]
CONFIG_FILES = {"models.json", "settings.json"}
"""The user's own configuration holds keys by design; everything else must not."""


def leaks(*texts: str) -> list[str]:
    return [secret for secret in PLANTED if any(secret in text for text in texts)]


def files_leaking(*roots: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and path.name not in CONFIG_FILES:
                leaked = leaks(path.read_text("utf-8", "replace"))
                if leaked:
                    found[str(path)] = leaked
    return found
