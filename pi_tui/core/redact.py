"""Secrets: which values are secret, and taking them out of text.

A proxy that answers 401 by quoting the key it was sent puts that key into the error text, and
from there into the session file, the HTML export, JSON/RPC output and the terminal. The session
runs every model call's error text through one ``Redactor`` (``session/redaction.py``)
holding every key it knows: ``--api-key``, the keys it resolved for requests (models.json
``apiKey`` literals, env names and ``!commands``), credential-like headers, and the values of
secret-named environment variables.

``is_secret_name`` is the rule for those names, shared with the shell tools' environment
(``tools/shell.py``), which drops such variables so a command cannot print them.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not treated as secrets: redacting "1" or "true" would mangle any text."""
SECRET_NAME_PATTERNS = ("*_API_KEY", "*_TOKEN", "*_SECRET", "*_SECRET_*", "*_ACCESS_KEY", "*_PASSWORD",
                        "API_KEY", "TOKEN", "SECRET", "PASSWORD")
"""Environment variable names that hold secrets (case-insensitive), as Codex's default exclusions."""
SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|password|credential|session", re.IGNORECASE)
"""Header names whose values are credentials (``Authorization``, ``x-api-key``, ``Cookie`` …)."""


def is_secret_name(name: str) -> bool:
    """Whether an environment variable of this name holds a secret by convention."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_NAME_PATTERNS)


def secret_env_values(env: Mapping[str, str]) -> list[str]:
    """The values of the secret-named variables of ``env``."""
    return [value for name, value in env.items() if is_secret_name(name)]


class Redactor:
    """Replaces every known secret in a text by ``[redacted]``; longest first, so a secret that
    contains another is replaced whole."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.add(*secrets)

    def add(self, *values: str | None) -> None:
        """Know these values from now on (``None``, blank and short values are ignored)."""
        new = {v.strip() for v in values if isinstance(v, str) and len(v.strip()) >= MIN_SECRET_LENGTH}
        if not new <= self._secrets:
            self._secrets |= new
            ordered = sorted(self._secrets, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(s) for s in ordered))

    @property
    def values(self) -> frozenset[str]:
        return frozenset(self._secrets)

    def redact(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(REDACTED, text)
