"""The pi-tui error tree.

    PiError
    ├── ConfigError            invalid settings / skill / template / model reference
    ├── SessionError
    │   ├── SessionFormatError file is not a session, or an unreadable line (names file + line)
    │   ├── SessionLockedError another process is appending to the same session file
    │   └── EntryNotFoundError
    ├── ToolError              expected tool failure → an error tool result
    ├── ExtensionError         load or hook failure (isolated by the runner)
    ├── ProviderSetupError     unknown model / missing credentials before a call is made
    └── AgentBusyError         prompt() while a run is in progress without a queue choice

Every message names the offending thing and where it is.
"""

from __future__ import annotations


class PiError(Exception):
    """Base class of every error pi-tui raises on purpose."""


class ConfigError(PiError):
    pass


class SessionError(PiError):
    pass


class SessionFormatError(SessionError):
    pass


class SessionLockedError(SessionError):
    pass


class SessionWriteError(SessionError):
    """The session file refused a write (disk full, I/O error). The entries stay in memory and
    are written with the next successful save."""


class EntryNotFoundError(SessionError):
    def __init__(self, entry_id: str) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id


class ToolError(PiError):
    pass


class ExtensionError(PiError):
    def __init__(self, message: str, *, extension_path: str = "", event: str = "") -> None:
        super().__init__(message)
        self.extension_path = extension_path
        self.event = event


class ProviderSetupError(PiError):
    pass


class AgentBusyError(PiError):
    pass
