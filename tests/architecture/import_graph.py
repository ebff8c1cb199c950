"""The file-level import graph of a package, and the rules ARCHITECTURE.md sets on it.

Every ``import`` statement counts as an edge — at module level, inside a function, under
``if TYPE_CHECKING:`` — because each one is a dependency a reader has to follow: an import moved
into a function still ties the two files together, it only hides the knot from the interpreter.
Lazy imports that keep the first frame fast are welcome as long as they make no cycle.

The checks are plain functions over a directory so a test can run them on a planted package
(tests/architecture/test_planted_violations.py) and see each rule fail.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class ModuleImports:
    path: Path
    internal: frozenset[str]
    """Modules of the package this one imports (dotted names of files)."""
    external: frozenset[str]
    """Top-level names of everything else it imports (``textual``, ``litellm``, ``json``...)."""
    lines: int


@dataclass(slots=True)
class ImportGraph:
    package: str
    modules: dict[str, ModuleImports] = field(default_factory=dict)

    def edges(self) -> dict[str, set[str]]:
        return {name: set(info.internal) for name, info in self.modules.items()}


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(name: str, known: set[str]) -> str | None:
    """The deepest module of the package that ``name`` (a dotted import target) names."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def _absolute(module: str | None, level: int, importer: str, is_package: bool) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _dynamic_targets(call: ast.Call, package: str, known: set[str]) -> list[str]:
    """``importlib.import_module("pkg.x")`` / ``__import__("pkg.x")``: an edge like an import
    statement. A name built at run time (``f"pkg.screens.{name}"``) is an edge to every module its
    constant prefix covers: the checker cannot know which one, so it assumes all of them."""
    func = call.func
    called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if called not in ("import_module", "__import__") or not call.args:
        return []
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return [first.value]
    if isinstance(first, ast.JoinedStr) and first.values and isinstance(first.values[0], ast.Constant):
        prefix = str(first.values[0].value)
        if prefix.split(".")[0] == package:
            return sorted(m for m in known if m.startswith(prefix)) or [prefix.rstrip(".")]
    return []


def build_graph(root: Path) -> ImportGraph:
    """Parse every ``*.py`` under ``root`` (a package directory) and resolve its imports."""
    package = root.name
    paths = sorted(root.rglob("*.py"))
    names = {_module_name(path, root): path for path in paths}
    known = set(names)
    graph = ImportGraph(package)
    for name, path in names.items():
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        internal: set[str] = set()
        external: set[str] = set()
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Call):
                targets = _dynamic_targets(node, package, known)
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node.module, node.level, name, is_package)
                # ``from pkg import sub`` imports the submodule file when there is one
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                           for alias in node.names]
            for target in targets:
                if target.split(".")[0] == package:
                    resolved = _resolve(target, known)
                    if resolved is not None and resolved != name:
                        internal.add(resolved)
                elif target:
                    external.add(target.split(".")[0])
        graph.modules[name] = ModuleImports(path, frozenset(internal), frozenset(external),
                                            len(text.splitlines()))
    return graph


# --------------------------------------------------------------------------- cycles


def find_cycles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One cycle (as a closed path ``a → b → ... → a``) per strongly connected component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def connect(start: str) -> None:  # iterative Tarjan: the graph is deep enough to matter
        nonlocal counter
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return sorted(_a_cycle_in(component, edges) for component in components)


def _a_cycle_in(component: list[str], edges: Mapping[str, Iterable[str]]) -> list[str]:
    """The shortest cycle through the component's first member (breadth-first)."""
    members = set(component)
    start = component[0]
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(edges.get(node, ())):
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [*reversed(path), start]
                if child not in parents:
                    parents[child] = node
                    following.append(child)
        frontier = following
    return [start, start]


def describe_cycle(cycle: list[str]) -> str:
    return " → ".join(cycle)


# --------------------------------------------------------------------------- rooms


@dataclass(frozen=True, slots=True)
class Rooms:
    """Who may import whom, by the first name under the package (``core``, ``modes``, ``cli``...)."""

    may_import: Mapping[str, frozenset[str]]
    """A room's allowed rooms besides itself; a room missing here may import any room."""
    only_importers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Third-party name → module prefixes that alone may import it (``textual``...)."""
    stdlib_only: frozenset[str] = frozenset()
    """Rooms that import nothing from outside the standard library (and ``allowed_third_party``)."""
    allowed_third_party: frozenset[str] = frozenset()
    """Names a stdlib-only room may still import."""


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def room_violations(graph: ImportGraph, rooms: Rooms) -> list[str]:
    import sys

    offenders: list[str] = []
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for name, info in sorted(graph.modules.items()):
        own = room_of(name)
        allowed = rooms.may_import.get(own)
        if allowed is not None:
            for target in sorted(info.internal):
                other = room_of(target)
                if other and other != own and other not in allowed:
                    offenders.append(f"{name} ({own}) imports {target} ({other})")
        for external in sorted(info.external):
            prefixes = rooms.only_importers.get(external)
            if prefixes is not None and not name.startswith(prefixes):
                offenders.append(f"{name} imports {external} (only {', '.join(prefixes)} may)")
            if own in rooms.stdlib_only and external not in stdlib and external not in rooms.allowed_third_party:
                offenders.append(f"{name} ({own}) imports {external}, outside the standard library")
    return offenders


def forbidden_importers(graph: ImportGraph, room: str, allowed: Iterable[str]) -> list[str]:
    """Modules outside ``room`` that import it, except those named (or prefixed) in ``allowed``."""
    allowed = tuple(allowed)
    prefix = f"{graph.package}.{room}"
    return sorted(
        f"{name} imports {target}"
        for name, info in graph.modules.items()
        if room_of(name) != room and not name.startswith(allowed)
        for target in info.internal
        if target == prefix or target.startswith(prefix + ".")
    )


def long_modules(graph: ImportGraph, limit: int) -> list[str]:
    return sorted(f"{info.path.name} ({name}): {info.lines} lines"
                  for name, info in graph.modules.items() if info.lines > limit)
