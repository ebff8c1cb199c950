"""Streamed tool-call arguments parse as pi 0.73.1's ``parseStreamingJson`` parses them: the
``partial`` of every ``toolcall_delta`` shows those arguments (issue 19 item 16). A prefix cut
inside an escape (``\\``, ``\\u00``), a literal (``tr``, ``nul``), an exponent (``2.5e``) or a new
key parsed as nothing, so the arguments shown blinked back to ``{}`` where pi's kept them.

Each vector (prefix, what pi gives) was taken from pi itself (``node`` on pi-ai's
``utils/json-parse.js``) over every prefix of a few real argument texts; these are the ones the
old parser got wrong.
"""

from __future__ import annotations

from typing import Any

import pytest

from pi_tui.core.partial_json import PartialJson

PI_PREFIXES: list[tuple[str, Any]] = [
    ('{"command": "echo ', {'command': 'echo'}),
    ('{"command": "echo \\', {'command': 'echo '}),
    ('{"command": "echo \\"hi\\', {'command': 'echo "hi'}),
    ('{"command": "echo \\"hi\\" ', {'command': 'echo "hi"'}),
    ('{"command": "echo \\"hi\\" \\', {'command': 'echo "hi" '}),
    ('{"command": "echo \\"hi\\" \\u', {'command': 'echo "hi" '}),
    ('{"command": "echo \\"hi\\" \\u0', {'command': 'echo "hi" '}),
    ('{"command": "echo \\"hi\\" \\u00', {'command': 'echo "hi" '}),
    ('{"command": "echo \\"hi\\" \\u00e', {'command': 'echo "hi" '}),
    ('{"command": "echo \\"hi\\" \\u00e9 ', {'command': 'echo "hi" é'}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": t', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": tr', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": tru', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": true, "none": n', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True, 'none': None}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": true, "none": nu', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True, 'none': None}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": true, "none": nul', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True, 'none': None}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": true, "none": null, "off": f', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True, 'none': None, 'off': False}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": true, "none": null, "off": fa', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True, 'none': None, 'off': False}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": true, "none": null, "off": fal', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True, 'none': None, 'off': False}),
    ('{"command": "echo \\"hi\\" \\u00e9 done", "timeout": 30, "flag": true, "none": null, "off": fals', {'command': 'echo "hi" é done', 'timeout': 30, 'flag': True, 'none': None, 'off': False}),
    ('{"path": "a.py", "edits": [{"', {'path': 'a.py', 'edits': [{}]}),
    ('{"path": "a.py", "edits": [{"o', {'path': 'a.py', 'edits': [{}]}),
    ('{"path": "a.py", "edits": [{"ol', {'path': 'a.py', 'edits': [{}]}),
    ('{"path": "a.py", "edits": [{"old', {'path': 'a.py', 'edits': [{}]}),
    ('{"path": "a.py", "edits": [{"oldT', {'path': 'a.py', 'edits': [{}]}),
    ('{"path": "a.py", "edits": [{"oldTe', {'path': 'a.py', 'edits': [{}]}),
    ('{"path": "a.py", "edits": [{"oldTex', {'path': 'a.py', 'edits': [{}]}),
    ('{"path": "a.py", "edits": [{"oldText', {'path': 'a.py', 'edits': [{}]}),
    ('{"path": "a.py", "edits": [{"oldText"', {'path': 'a.py', 'edits': [{}]}),
    ('{"path": "a.py", "edits": [{"oldText": "x ', {'path': 'a.py', 'edits': [{'oldText': 'x'}]}),
    ('{"path": "a.py", "edits": [{"oldText": "x = ', {'path': 'a.py', 'edits': [{'oldText': 'x ='}]}),
    ('{"path": "a.py", "edits": [{"oldText": "x = 1\\', {'path': 'a.py', 'edits': [{'oldText': 'x = 1'}]}),
    ('{"path": "a.py", "edits": [{"oldText": "x = 1\\n", "newText": "x = -2.5e3\\', {'path': 'a.py', 'edits': [{'oldText': 'x = 1\n', 'newText': 'x = -2.5e3'}]}),
    ('{"path": "a.py", "edits": [{"oldText": "x = 1\\n", "newText": "x = -2.5e3\\n"}, {"', {'path': 'a.py', 'edits': [{'oldText': 'x = 1\n', 'newText': 'x = -2.5e3\n'}, {}]}),
    ('{"path": "a.py", "edits": [{"oldText": "x = 1\\n", "newText": "x = -2.5e3\\n"}, {"o', {'path': 'a.py', 'edits': [{'oldText': 'x = 1\n', 'newText': 'x = -2.5e3\n'}, {}]}),
    ('{"a":[1,2,{"', {'a': [1, 2, {}]}),
    ('{"a":[1,2,{"b', {'a': [1, 2, {}]}),
    ('{"a":[1,2,{"b"', {'a': [1, 2, {}]}),
    ('{"n": -12.5e', {'n': -12.5}),
    ('{"n": -12.5e-', {'n': -12.5}),
    ('{"n": -12.5e-3, "m": 0, "s": "a\\', {'n': -0.0125, 'm': 0, 's': 'a'}),
    ('{"n": -12.5e-3, "m": 0, "s": "a\\tb\\', {'n': -0.0125, 'm': 0, 's': 'a\tb'}),
    ('{"n": -12.5e-3, "m": 0, "s": "a\\tb\\\\c\\', {'n': -0.0125, 'm': 0, 's': 'a\tb\\c'}),
    ('{"a": [t', {'a': [True]}),
    ('{"a": [tr', {'a': [True]}),
    ('{"a": [tru', {'a': [True]}),
    ('{"a": [true, f', {'a': [True, False]}),
    ('{"a": [true, fa', {'a': [True, False]}),
    ('{"a": [true, false, n', {'a': [True, False, None]}),
    ('{"a": [true, false, nu', {'a': [True, False, None]}),
    ('{"a": [true, false, null, "x y ', {'a': [True, False, None, 'x y']}),
    ('{"a": [true, false, null, "x y  ', {'a': [True, False, None, 'x y']}),
    ('{"a":"\\', {'a': ''}),
    ('{"a":"\\u', {'a': ''}),
    ('{"a":"\\ud', {'a': ''}),
    ('{"a":"\\ud8', {'a': ''}),
    ('{"a":"\\ud83', {'a': ''}),
    ('{"a":"\\ud83d\\', {'a': '\ud83d'}),
    ('{"a":"\\ud83d\\u', {'a': '\ud83d'}),
    ('{"a":"\\ud83d\\ud', {'a': '\ud83d'}),
    ('{"a":"\\ud83d\\ude', {'a': '\ud83d'}),
    ('{"a":"\\ud83d\\ude0', {'a': '\ud83d'}),
    ('{"a":"\\ud83d\\ude00 ', {'a': '😀'}),
    ('{"content": "line1\\', {'content': 'line1'}),
    ('{"content": "line1\\nline2\\', {'content': 'line1\nline2'}),
    ('{"content": "line1\\nline2\\n\\', {'content': 'line1\nline2\n'}),
    ('{"content": "line1\\nline2\\n\\t ', {'content': 'line1\nline2\n\t'}),
    ('{"content": "line1\\nline2\\n\\t  ', {'content': 'line1\nline2\n\t'}),
    ('{"content": "line1\\nline2\\n\\t  indented\\', {'content': 'line1\nline2\n\t  indented'}),
    ('  {"a" : { "', {'a': {}}),
    ('  {"a" : { "b', {'a': {}}),
    ('  {"a" : { "b"', {'a': {}}),
    ('  {"a" : { "b" ', {'a': {}}),
]


@pytest.mark.parametrize(("prefix", "pi_value"), PI_PREFIXES)
def test_a_streamed_prefix_parses_as_pis(prefix: str, pi_value: Any) -> None:
    value = PartialJson().append(prefix).value()
    assert (value if isinstance(value, dict) else {}) == pi_value


def test_a_prefix_fed_in_fragments_gives_the_same() -> None:
    text = '{"command": "echo \\"hi\\" done", "flag": true}'
    buffer = PartialJson()
    for end in range(1, len(text) + 1):
        buffer.append(text[end - 1])
        assert buffer.value() == PartialJson().append(text[:end]).value()
