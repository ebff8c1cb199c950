"""Escape sequences a hostile model answer, tool output or file name can carry, one per family.

Each would act on a real terminal if written raw: the tests push all of them through every path
to the terminal and check that no control character arrives, while JSON/RPC output keeps them
(JSON-escaped) so nothing is lost.
"""

from __future__ import annotations

import re

FAMILIES: dict[str, str] = {
    "osc52 clipboard write": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "osc0 window title (BEL)": "\x1b]0;pwned-title\x07",
    "osc2 window title (ST)": "\x1b]2;pwned-title\x1b\\",
    "osc8 hyperlink": "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "csi screen clear": "\x1b[2J\x1b[3J",
    "csi cursor home and moves": "\x1b[H\x1b[5A\x1b[10;10H",
    "csi erase line": "\x1b[2K",
    "csi device status query": "\x1b[6n",
    "csi alternate screen": "\x1b[?1049h",
    "csi mouse tracking": "\x1b[?1000h",
    "sgr colour": "\x1b[31;1mred\x1b[0m",
    "dcs string": "\x1bP+q544e\x1b\\",
    "apc string": "\x1b_Gpayload\x1b\\",
    "esc reset": "\x1bc",
    "8-bit csi": "\x9b2J",
    "8-bit osc": "\x9d0;pwned-title\x07",
    "bell": "\x07",
    "backspace": "abc\x08\x08\x08",
    "carriage return overwrite": "safe text\rEVIL",
    "delete": "\x7f",
}

ALL = "".join(f"[{name}: {payload}]\n" for name, payload in FAMILIES.items())
"""Every family in one text, each labelled (the labels are plain text and must survive)."""

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Any control character but tab and newline: none may reach a terminal from outside text."""


def controls_in(text: str) -> list[str]:
    """The control characters found (repr'd, for a readable failure)."""
    return [repr(m.group()) for m in CONTROL.finditer(text)]
