"""Which client carries a model: one of our own (no litellm import) or the litellm adapter.

``import litellm`` costs seconds, so each mode asks here before paying for it: the SDK picks the
provider with ``native_api``, print/JSON/RPC mode starts litellm's import early only when
``uses_litellm`` says the model needs it, and the TUI preloads it after the first frame on the
same condition. Adding a native client means adding its ``api`` here (and its provider in
``sdk.default_provider_for``).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by modes/litellm_warmup before anything else: stay import-free
    from pi_tui.core.provider import ModelInfo

FORCE_LITELLM_ENV = "PI_TUI_FORCE_LITELLM"

BUILTIN_APIS = {"anthropic": "anthropic-messages", "gemini": "google-generative-ai", "google": "google-generative-ai",
                "openai": "openai-responses"}
"""pi's ``api`` for the built-in providers of those names (other ones: ``openai-completions``);
``google`` is pi's name for Gemini, ``gemini`` litellm's."""


def native_api(model: ModelInfo) -> str | None:
    """The API our own client speaks to this model, or None when litellm carries it.

    ``openai-completions`` with a ``baseUrl`` (models.json providers: local servers, proxies)
    is posted by ``openai_http``; ``openai-responses`` (provider ``openai``, models.json
    providers with that api) by ``responses_http``; ``anthropic-messages`` (provider
    ``anthropic``, models.json providers with that api) by ``anthropic_http``;
    ``google-generative-ai`` (providers ``gemini`` and ``google``, models.json providers with
    that api) by ``gemini_http``. ``PI_TUI_FORCE_LITELLM=1`` sends the ``openai-completions``,
    ``anthropic-messages`` and ``google-generative-ai`` ones through litellm (the Responses wire
    has no litellm twin here), so both routes stay testable against the same fakes.

    A model of litellm's own providers (``groq/…``, ``bedrock/…``, ``ollama/…``) stays with
    litellm even when models.json gives its provider a ``baseUrl``: that is litellm's
    ``api_base`` for the provider's own API, which need not be OpenAI's.
    """
    declared = not model.litellm_model or model.litellm_model.startswith("openai/")
    return native_api_for(model.api, model.base_url, declared=declared)


def native_api_for(api: str, base_url: str | None, *, declared: bool = True) -> str | None:
    """``native_api`` from a model's ``api`` and ``baseUrl``; ``declared`` is false for a model
    of litellm's catalog (its ``openai-completions`` is a default, not a promise)."""
    if api == "openai-responses":
        return "openai-responses"
    if os.environ.get(FORCE_LITELLM_ENV):
        return None
    if api == "openai-completions" and base_url and declared:
        return "openai-completions"
    if api in ("anthropic-messages", "google-generative-ai"):
        return api
    return None


def uses_litellm(model: ModelInfo | None) -> bool:
    return model is not None and native_api(model) is None
