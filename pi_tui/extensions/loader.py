"""Find and load Python extensions (docs/extensions.md).

Where: ``<agentDir>/extensions/``, ``<cwd>/.pi/extensions/`` (each ``*.py`` file, or a folder
with ``__init__.py``), settings ``extensions[]``, then ``-e PATH`` (a file or a package folder).
``--no-extensions`` turns discovery off; ``-e`` paths still load. The project folder is searched
only for a trusted project (``resources/trust.py``; the settings' project ``extensions[]`` are
already left out by the settings then).

How: each module is imported under a fresh private name (so ``/reload`` really re-executes it)
and its ``register(pi)`` is called. Anything that goes wrong — a syntax error, an import error,
a missing or failing ``register`` — is reported with the extension's path and that extension is
skipped; registrations it made before failing are discarded, so it is all or nothing. (A single
command that could never run is refused by ``register_command`` itself, reported the same way,
and the rest of the extension stands.)
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path

from pi_tui.core.errors import ExtensionError
from pi_tui.extensions.api import LOAD_EVENT, Extension, ExtensionAPI
from pi_tui.extensions.dispatch import DEFAULT_TIMEOUT_S, describe
from pi_tui.extensions.runner import ExtensionRunner
from pi_tui.resources.locations import project_dir
from pi_tui.resources.trust import extension_entries

_module_ids = itertools.count(1)


def discover_extension_paths(
    cwd: Path,
    agent_dir: Path,
    *,
    explicit_paths: Sequence[Path] = (),
    settings_paths: Sequence[Path] = (),
    include_defaults: bool = True,
    include_project: bool = True,
) -> list[Path]:
    """Every extension path in pi's load order — ``-e`` paths, then the settings' ``extensions``
    (project file first), then ``<cwd>/.pi/extensions/``, then ``<agentDir>/extensions/`` — de-
    duplicated by real path, the first place a path appears winning. The order decides which
    handler runs first and which of two same-named commands keeps its name.
    ``include_project=False`` (an untrusted project) leaves ``<cwd>/.pi/extensions/`` out."""
    paths: list[Path] = list(explicit_paths)
    if include_defaults:
        paths += list(settings_paths)
        if include_project:
            paths += extension_entries(project_dir(cwd) / "extensions")
        paths += extension_entries(agent_dir / "extensions")
    unique: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        key = path.resolve() if path.exists() else path.absolute()
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def _import(path: Path) -> object:
    if path.is_dir():
        init = path / "__init__.py"
        if not init.is_file():
            raise ExtensionError("not an extension: a folder needs an __init__.py")
        location, search = init, [str(path)]
    elif path.is_file():
        if path.suffix != ".py":
            raise ExtensionError("not an extension: expected a .py file or a package folder")
        location, search = path, None
    else:
        raise ExtensionError("extension path does not exist")
    name = f"pi_tui_extension_{next(_module_ids)}_{path.stem.replace('-', '_')}"
    spec = importlib.util.spec_from_file_location(name, location, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise ExtensionError("cannot import this file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and relative imports look the module up here
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_extension(path: Path, runner: ExtensionRunner) -> Extension:
    """Import ``path`` and run its ``register(pi)``; raises on any failure (see ``load_extensions``)."""
    module = _import(path)
    register = getattr(module, "register", None)
    if not callable(register):
        raise ExtensionError("the module has no register(pi) function")
    extension = Extension(path=path.absolute())
    result = register(ExtensionAPI(extension, runner))
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()
        raise ExtensionError("register(pi) must be a plain function, not async (do async work in session_start)")
    return extension


def load_extensions(
    paths: Sequence[Path], runner: ExtensionRunner | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S
) -> ExtensionRunner:
    """Load each path into ``runner`` (a new one by default). Failures become ``extension_error``
    events with ``event == "load"`` in ``runner.errors``; the other extensions still load."""
    runner = runner if runner is not None else ExtensionRunner(timeout_s=timeout_s)
    for path in paths:
        try:
            extension = load_extension(path, runner)
        except SystemExit as exc:  # an extension calling sys.exit() must not end the program
            runner.report(path.absolute(), LOAD_EVENT, f"SystemExit: {exc.code}")
            continue
        except Exception as exc:
            runner.report(path.absolute(), LOAD_EVENT, describe(exc))
            continue
        runner.add(extension)
    return runner


def reset_module_cache() -> None:
    """Drop every module this loader imported (tests and ``/reload`` hygiene)."""
    for name in [n for n in sys.modules if n.startswith("pi_tui_extension_")]:
        with contextlib.suppress(KeyError):
            del sys.modules[name]
