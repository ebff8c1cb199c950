"""Secrets: which values are secret, and taking them out of text.

A proxy that answers 401 by quoting the key it was sent puts that key into the error text, and
from there into the session file, the HTML export, JSON/RPC output and the terminal. The session
runs every model call's error text through one ``Redactor`` (``session/redaction.py``)
holding every key it knows: ``--api-key``, the keys it resolved for requests (models.json
``apiKey`` literals, env names and ``!commands``), credential-like headers, and the values of
secret-named environment variables.

``is_secret_name`` is the rule for those names, shared with the shell tools' environment
(``tools/shell.py``), which drops such variables so a command cannot print them.

``StreamRedactor`` does the same to bytes written as they arrive (a huge command output's
full-output file, ``tools/output.py``), where a key can be split between two chunks.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from typing import AnyStr, Generic

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not treated as secrets: redacting "1" or "true" would mangle any text."""
SECRET_NAME_PATTERNS = ("*_API_KEY", "*_TOKEN", "*_SECRET", "*_SECRET_*", "*_ACCESS_KEY", "*_KEY", "*APIKEY",
                        "*PASSWORD", "*_PASSWD", "*_PWD", "API_KEY", "TOKEN", "SECRET", "PASSWORD")
"""Environment variable names that hold secrets (case-insensitive). Narrower than Codex's default
exclusions (``*KEY*``, ``*SECRET*``, ``*TOKEN*``), which also drop ``TOKENIZERS_PARALLELISM`` or
``AWS_ACCESS_KEY_ID``; wider than the bare ``*_API_KEY``/``*_TOKEN``/``*_SECRET``: the common
``AZURE_OPENAI_KEY``/``STRIPE_KEY``, ``OPENAI_APIKEY``, libpq's ``PGPASSWORD`` and MySQL's
``MYSQL_PWD`` are secrets too."""
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


class _KeyStream(Generic[AnyStr]):
    """Redacts known secrets from a stream fed in pieces (bytes or text): a key split between two
    pieces is still caught.

    The last ``len(longest key) - 1`` units are held back until the next piece (or ``flush``);
    before them every position has room for the longest key, so nothing there needs more input
    to be decided. The common case — no key anywhere — costs one ``in`` per key (C speed). A
    piece that holds keys is cut where no key straddles the cut and each key is replaced with
    ``replace``, longest first (C speed even with a key in every line; a regular expression took
    ~10 s per GiB). That is ``Redactor.redact``'s result unless two different keys overlap each
    other in the text, where either way one of them is cut short.
    """

    def __init__(self, keys: list[AnyStr], token: AnyStr, empty: AnyStr) -> None:
        self._keys: list[AnyStr] = sorted(keys, key=len, reverse=True)
        self._token: AnyStr = token
        self._keep = len(self._keys[0]) - 1 if self._keys else 0
        self._carry: AnyStr = empty

    @property
    def active(self) -> bool:
        return bool(self._keys)

    def _feed(self, piece: AnyStr) -> tuple[AnyStr, AnyStr | None]:
        """``(ready, rest)``: ``ready`` is final; ``rest`` (when not None) follows it as is —
        the unchanged body of a piece that holds no key, left uncopied for the caller."""
        keep, carry = self._keep, self._carry
        if len(piece) > keep and not self._holds_key(carry, piece):
            self._carry = piece[-keep:]
            return carry, piece
        buffer = carry + piece
        cut = self._cut_outside_keys(buffer, len(buffer) - keep)
        self._carry = buffer[cut:]
        return self._replace(buffer[:cut]), None

    def flush(self) -> AnyStr:
        """What is still held back, redacted (the stream has ended)."""
        rest, self._carry = self._carry, self._carry[:0]
        return self._replace(rest)

    def _holds_key(self, carry: AnyStr, piece: AnyStr) -> bool:
        # A key within the carry or across the seam lies within ``carry + piece[:keep]``.
        seam = carry + piece[: self._keep]
        return any(key in piece or key in seam for key in self._keys)

    def _cut_outside_keys(self, buffer: AnyStr, cut: int) -> int:
        """``cut``, moved past every key occurrence that straddles it."""
        if cut <= 0:
            return 0
        moved = True
        while moved:
            moved = False
            for key in self._keys:  # any occurrence found within this window straddles ``cut``
                at = buffer.find(key, max(0, cut - len(key) + 1), cut + len(key) - 1)
                if at != -1:
                    cut, moved = at + len(key), True
        return cut

    def _replace(self, data: AnyStr) -> AnyStr:
        for key in self._keys:
            data = data.replace(key, self._token)
        return data


class StreamRedactor(_KeyStream[bytes]):
    """Known secrets out of a byte stream written as it arrives (a huge command output's
    full-output file, ``tools/output.py``)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        super().__init__([s.encode("utf-8") for s in Redactor(secrets).values], REDACTED.encode(), b"")

    def feed(self, chunk: bytes) -> list[bytes | memoryview]:
        """The bytes that can be written now, in order (the last few may be held back)."""
        if not self._keys:
            return [chunk]
        ready, body = self._feed(chunk)
        if body is None:
            return [ready]
        return [ready, memoryview(body)[: len(body) - self._keep]]  # no copy of a clean chunk


class TextStreamRedactor(_KeyStream[str]):
    """Known secrets out of text shown as it streams (a model's reply, delta by delta): what is
    final so far, and ``preview()`` of the held-back rest without any beginning of a key."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        super().__init__(list(Redactor(secrets).values), REDACTED, "")
        self._starts = {key[0] for key in self._keys}

    def feed(self, piece: str) -> str:
        """The part of the stream that is final now (redacted)."""
        if not self._keys:
            return piece
        ready, body = self._feed(piece)
        return ready if body is None else ready + body[: len(body) - self._keep]

    def preview(self) -> str:
        """The held-back text as it may be shown meanwhile: redacted, and without a tail that
        could be the start of a key (it shows once the next piece decides it)."""
        carry = self._carry
        for at in range(max(0, len(carry) - self._keep), len(carry)):
            if carry[at] in self._starts and any(key.startswith(carry[at:]) for key in self._keys):
                carry = carry[:at]
                break
        return self._replace(carry)
