"""The session's way to a model: one provider per model (behind the time limit and redaction),
the API key, and the "is a model usable" checks with pi's messages.

Why a part of its own: the run configuration, compaction, branch summaries and (later) child
sessions all call models, and each needs exactly these four things, not the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_tui.core.errors import PiError, ProviderSetupError
from pi_tui.core.provider import ModelInfo, Provider
from pi_tui.core.redact import SECRET_HEADER
from pi_tui.session.live_state import LiveState
from pi_tui.session.provider_timeout import ProviderWithTimeout, settings_timeout_ms
from pi_tui.session.redaction import RedactingProvider


class ModelAccess:
    def __init__(
        self, state: LiveState, *, provider_factory: Callable[[ModelInfo], Provider], model_registry: Any,
        api_key: str | None, check_credentials: bool,
    ) -> None:
        self._state = state
        self.provider_factory = provider_factory
        self.model_registry = model_registry
        self.api_key_override = api_key
        self.checks_credentials = check_credentials
        """False when the SDK was given a provider object: it brings its own credentials."""
        self._providers: dict[tuple[str, str, str], Provider] = {}

    def provider_for(self, model: ModelInfo) -> Provider:
        key = (model.provider, model.id, model.api)
        if key not in self._providers:
            redactor = self._state.redactor
            redactor.add(*(v for name, v in model.headers.items() if SECRET_HEADER.search(name)))
            timed = ProviderWithTimeout(self.provider_factory(model), lambda: settings_timeout_ms(self._state.settings))
            self._providers[key] = RedactingProvider(timed, redactor)
        return self._providers[key]

    def api_key_for(self, model: ModelInfo) -> str | None:
        if self.model_registry is None:
            return self.api_key_override
        key: str | None = self.model_registry.api_key_for(model, self.api_key_override)
        self._state.redactor.add(key)  # a models.json literal, env name or !command: known from now on
        return key

    def require_model(self) -> ModelInfo:
        model = self._state.model
        if model is None:
            raise ProviderSetupError(
                "No model selected.\n\n" + self.setup_help() + "\n\nThen use /model to select a model."
            )
        return model

    def setup_help(self) -> str:
        helper = getattr(self.model_registry, "_help", None)
        return helper() if callable(helper) else "Set --model provider/id, or defaultProvider/defaultModel in settings.json."

    def check_credentials(self, model: ModelInfo) -> None:
        require = getattr(self.model_registry, "require_api_key", None)
        if self.checks_credentials and callable(require):
            require(model, self.api_key_override)

    def resolve(self, provider: str, model_id: str) -> ModelInfo | None:
        """A stored ``provider/id`` as a model (the current one if it is that), or None."""
        current = self._state.model
        if current is not None and (current.provider, current.id) == (provider, model_id):
            return current
        if self.model_registry is None:
            return None
        try:
            found: ModelInfo = self.model_registry.resolve(f"{provider}/{model_id}", provider)
        except PiError:
            return None
        return found
