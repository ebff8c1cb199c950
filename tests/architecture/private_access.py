"""Who reaches into another object's private attributes (``other._name``).

A leading underscore means "this module's own": a class may touch the private attributes of
another instance of itself (``manager._install`` in a classmethod), a module those of the classes
it defines — but a collaborator that writes ``session._state`` or calls ``runner._guarded`` is
coupled to internals nobody promised it, which is what the composition root (issue 18) removed.
Such a reach is allowed only when the name is defined in the same module; otherwise it must go
through a public seam (an attribute, a method, a Protocol defined below).
"""

from __future__ import annotations

import ast
from pathlib import Path

ALLOWED = frozenset({"os._exit", "sys._getframe"})
"""The standard library's own public names that start with an underscore."""


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined_here(tree: ast.AST) -> set[str]:
    """Private names this module defines: functions, classes, class attributes, ``self._x = …``,
    ``__slots__`` entries. (Assigning ``other._x`` defines nothing: that is the reach itself.)"""
    names: set[str] = set()

    def bind(target: ast.expr) -> None:
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute) and _is_own(target.value):
            names.add(target.attr)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                bind(element)

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                bind(target)
                if isinstance(target, ast.Name) and target.id == "__slots__" and node.value is not None:
                    names.update(c.value for c in ast.walk(node.value)
                                 if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return {name for name in names if _is_private(name)}


def _is_own(value: ast.expr) -> bool:
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


def private_reaches(root: Path, *, skip: tuple[str, ...] = ("testing",)) -> list[str]:
    """``path:line: expression`` for each reach into a private attribute defined elsewhere."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts and relative.parts[0] in skip:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        own = _defined_here(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not _is_private(node.attr) or _is_own(node.value):
                continue
            text = ast.unparse(node)
            if node.attr in own or text in ALLOWED:
                continue
            found.append(f"{root.name}/{relative}:{node.lineno}: {text}")
    return found
