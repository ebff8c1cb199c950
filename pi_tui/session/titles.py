"""Session titles: after the first answer, a cheap model names the session in a few words.

Off by default (``sessionTitles.enabled``), as Crush's and Claude Code's titles are options. When
on, the first ``agent_end`` that leaves a user message and a real answer (not an error, not an
abort) in a session that has no name starts **one** background request — never awaited by the
run, so the answer is on screen at once and the next prompt can start meanwhile:

* the model is ``sessionTitles.model`` (``"provider/id"``, e.g. ``"anthropic/claude-haiku-4-5"``)
  or, unset, the session's own model; a model that cannot be resolved skips the title;
* one user message holding the first question and the first answer (each cut to 2,000
  characters), a short system prompt, no tools, no thinking, ``MAX_TOKENS`` of output, no
  session id (no cache to reuse), at most ``TITLE_SECONDS``;
* the answer's first line, without quotes, Markdown marks or a final period, at most
  ``MAX_TITLE_CHARS``, becomes the session's name through ``set_session_name`` (pi's
  ``session_info`` entry, as ``/name`` writes it): the footer and ``/resume`` show it.

Never twice: each session id is asked for at most once per process, whatever the outcome. ``/name``
wins: a session named before the request or while it runs (the user, an extension) keeps its
name; so does a session left meanwhile (``/new``, ``/resume``). Failures never reach the UI: they
are logged (logger ``pi_tui.session.titles``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from pi_tui.core.deadline import within
from pi_tui.core.messages import assistant_text, text_of, user_message
from pi_tui.core.provider import CompletionRequest, ModelInfo
from pi_tui.core.terminal_text import printable
from pi_tui.session.summarizer import call_summarizer

TITLE_SECONDS = 30.0
MAX_TOKENS = 64
MAX_TITLE_CHARS = 60
EXCERPT_CHARS = 2_000
TITLE_SYSTEM_PROMPT = (
    "You name coding-assistant sessions for a list of past sessions. Given the user's first message "
    "and the assistant's first answer, reply with a title of 2 to 6 words saying what the session is "
    "about. Reply with the title only: no quotes, no Markdown, no final period."
)

_log = logging.getLogger(__name__)


def clean_title(text: str) -> str:
    """The first non-empty line of the model's reply as a title (see the module docstring)."""
    line = next((ln for ln in printable(text).splitlines() if ln.strip()), "")
    line = " ".join(line.split()).strip("#*_`\"'“”‘’ ")
    if line.lower().startswith("title:"):
        line = line[len("title:"):].strip("#*_`\"'“”‘’ ")
    line = line.rstrip(".").strip()
    if len(line) > MAX_TITLE_CHARS:
        cut = line[:MAX_TITLE_CHARS].rsplit(" ", 1)[0]
        line = (cut or line[:MAX_TITLE_CHARS]).rstrip(",;:-") + "…"
    return line


def first_exchange(messages: list[Any]) -> tuple[str, str] | None:
    """The first user message's text and the first real answer's text, or None while there is
    no answer yet (only errors or aborts so far)."""
    question = answer = None
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "user" and question is None:
            question = text_of(message.get("content") or "").strip()
        elif role == "assistant" and question and message.get("stopReason") not in ("error", "aborted"):
            text = assistant_text(message).strip()  # type: ignore[arg-type]
            if text:
                answer = text
                break
    if not question or not answer:
        return None
    return question[:EXCERPT_CHARS], answer[:EXCERPT_CHARS]


class SessionTitler:
    """Listens to one session's events and names it once (see the module docstring)."""

    def __init__(self, session: Any, *, resolve: Callable[[str, str], ModelInfo | None] | None = None) -> None:
        self.session = session
        self._resolve = resolve
        self.asked: set[str] = set()
        """Session ids a title was asked for (or found named): never again in this process."""
        self.tasks: set[asyncio.Task[None]] = set()

    def enabled(self) -> bool:
        settings = getattr(self.session, "settings", None)
        return bool(settings is not None and settings.get("sessionTitles.enabled", False) is True)

    def on_event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "agent_end" and self.enabled():
            self.maybe_start()

    def maybe_start(self) -> asyncio.Task[None] | None:
        session = self.session
        session_id = str(session.state.session_id)
        if session_id in self.asked:
            return None
        if session.get_session_name():
            self.asked.add(session_id)  # named already: /name (or an extension) wins
            return None
        exchange = first_exchange(list(session.messages))
        if exchange is None:
            return None  # no real answer yet: the next run's end tries again
        self.asked.add(session_id)
        try:
            task = asyncio.get_running_loop().create_task(self._name(session_id, *exchange))
        except RuntimeError:
            return None
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def _model(self) -> ModelInfo | None:
        ref = self.session.settings.get("sessionTitles.model", None)
        if not isinstance(ref, str) or not ref.strip():
            model: ModelInfo | None = self.session.model
            return model
        provider, _, model_id = ref.strip().partition("/")
        found = self._resolve(provider, model_id) if self._resolve is not None and model_id else None
        if found is None:
            _log.warning("session title skipped: sessionTitles.model %r is not a known model", ref)
        return found

    async def _name(self, session_id: str, question: str, answer: str) -> None:
        try:
            model = self._model()
            if model is None:
                return
            session = self.session
            request = CompletionRequest(
                model=model, system_prompt=TITLE_SYSTEM_PROMPT,
                messages=[user_message(f"User:\n{question}\n\nAssistant:\n{answer}")],
                tools=[], max_tokens=MAX_TOKENS, reasoning=None, session_id=None, api_key=session.api_key_for(model))
            reply = await within(call_summarizer(session.provider_for(model), request), TITLE_SECONDS)
            if reply.get("stopReason") in ("error", "aborted"):
                _log.warning("session title request failed (%s): %s", model.ref,
                             reply.get("errorMessage") or reply.get("stopReason"))
                return
            title = clean_title(assistant_text(reply))
            if not title:
                _log.warning("session title request (%s) returned no title", model.ref)
                return
            if str(session.state.session_id) != session_id or session.get_session_name():
                _log.info("session title %r not used: the session was named or left meanwhile", title)
                return
            session.set_session_name(title)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            _log.warning("session title request took longer than %.0f s", TITLE_SECONDS)
        except Exception as err:  # never in the UI: a title is a nicety
            _log.warning("session title request failed: %s: %s", type(err).__name__, err)

    def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()


def titler_for(session: Any) -> SessionTitler:
    """A titler resolving ``sessionTitles.model`` through the session's own model access."""
    models = getattr(session, "_models", None)
    resolve = getattr(models, "resolve", None)
    return SessionTitler(session, resolve=resolve if callable(resolve) else None)
