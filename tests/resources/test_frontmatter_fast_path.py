"""The frontmatter fast path (``frontmatter._simple_mapping``) gives exactly PyYAML's dict (read by
the YAML 1.2 core schema, ``frontmatter.core_schema_loader``) or
declines: generated ``key: value`` blocks, built from the characters that change YAML's reading
(quotes, ``:``, ``#``, indicators, bool/null words, non-ASCII, control characters), go through
both. And the files every start reads (the built-in skills and templates) take the fast path,
so PyYAML is not imported at start-up for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pi_tui.resources.builtin import builtin_prompts_dir, builtin_skills_dir
from pi_tui.resources.frontmatter import _simple_mapping, core_schema_loader, parse_frontmatter

_TRICKY = [*" :#'\"-?|>!&*%@`[]{},=~<\\\t.0123456789", "yes", "No", "TRUE", "off", "null", "é", "日本",
                                                             "\u2028", "\ufeff", "\x85", "\x07", "\U0001f600"]
_words = st.lists(st.sampled_from(_TRICKY) | st.text(alphabet="abcXYZ", min_size=1, max_size=4), max_size=8).map("".join)
_keys = st.sampled_from(["name", "description", "argument-hint", "on", "Yes", "_x", "a-b", "k9"]) | _words
_separators = st.sampled_from([": ", ":  ", ":", ": \t", " : "])
_lines = st.tuples(_keys, _separators, _words, st.sampled_from(["", " ", "  #c"])).map(lambda t: "".join(t))
# Lines close to the fast path's form (so that it answers often, not only declines): a plain
# key, ": ", then text that starts with a letter or a quote and holds a few tricky characters.
_near_values = st.tuples(st.sampled_from(["a", "Do", "n", "o", "T", "é", '"', "'"]), _words,
                         st.sampled_from(["", '"', "'", " x"])).map(lambda t: "".join(t))
_near_lines = st.tuples(st.sampled_from(["name", "description", "hint", "a-b", "on", "y"]), st.just(": "),
                        _near_values).map(lambda t: "".join(t))
_lines = _lines | _near_lines | _near_lines
_blocks = st.lists(_lines | st.just(""), min_size=1, max_size=5).map(lambda lines: "\n".join(lines) + "\n")


def _pyyaml(text: str) -> object:
    try:
        return yaml.load(text, Loader=core_schema_loader())
    except yaml.YAMLError:
        return "error"


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_blocks)
@example("name: git-bisect\ndescription: Find the commit, automated (by a test). Use when it broke.\n")
@example('argument-hint: "[git range, e.g. main..HEAD] [focus]"\n')
@example("description: 'it''s'\n")
@example("on: yes\n")
@example("when: 2024-01-01\n")
@example("a: b: c\n")
@example("a: b #c\n")
@example("a: \u65e5\u672c\u8a9e\n")
def test_the_fast_path_gives_pyyamls_dict_or_declines(block: str) -> None:
    fast = _simple_mapping(block)
    if fast is not None:
        assert fast == _pyyaml(block), block


def test_plain_text_and_quoted_values_take_the_fast_path() -> None:
    assert _simple_mapping("name: x-y\ndescription: Does a, b (and c).\n") == {"name": "x-y", "description": "Does a, b (and c)."}
    assert _simple_mapping('hint: "<path> [question]"\nother: \'[a]\'\n') == {"hint": "<path> [question]", "other": "[a]"}
    assert _simple_mapping("on: yes\ny: off\n") == {"on": "yes", "y": "off"}  # YAML 1.2: text, as in pi
    for declined in ("a: true\n", "a: Null\n", "a: 12\n", "a: b: c\n", "a: [1, 2]\n", "a: |\n  x\n", "  a: b\n", "a:\n"):
        assert _simple_mapping(declined) is None, declined


def test_every_built_in_skill_and_template_takes_the_fast_path() -> None:
    files = [*builtin_skills_dir().glob("*/SKILL.md"), *builtin_prompts_dir().glob("*.md")]
    assert len(files) >= 4
    for file in files:
        text = file.read_text(encoding="utf-8")
        block = text[4 : text.index("\n---", 3)] + "\n"
        assert _simple_mapping(block) is not None, f"{file} would import PyYAML at every start"
        assert parse_frontmatter(text).frontmatter == _pyyaml(block)


def test_loading_the_built_in_resources_does_not_import_pyyaml(tmp_path: Path) -> None:
    code = ("import sys\nfrom pathlib import Path\n"
            "from pi_tui.resources.skills import load_skills\n"
            "from pi_tui.resources.prompt_templates import load_prompt_templates\n"
            f"skills = load_skills(Path({str(tmp_path)!r}), Path({str(tmp_path / 'agent')!r})).skills\n"
            f"templates = load_prompt_templates(Path({str(tmp_path)!r}), Path({str(tmp_path / 'agent')!r})).templates\n"
            "assert skills and templates, (skills, templates)\n"
            "print('yaml' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
