"""Issue 19 items 4 and 7: a summary request fits the window in real tokens, and what gives way.

The ScriptedProvider refuses, like a real endpoint, a request whose prompt (o200k tokens) plus
the output it asks for exceed the model's window (``refuse_beyond_window``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.core.context.summary_fit import OUTPUT_FLOOR_TOKENS
from pi_tui.core.messages import text_of, user_message
from pi_tui.core.provider import ModelInfo
from pi_tui.core.tokens import count_tokens_exact
from pi_tui.testing.scripted import request_tokens
from tests.session.compaction_host import FakeHost, summary_turn, usage_assistant

CJK = "漢字の文章です。これは回答です。中文字符测试，한국어 문장입니다.\n"
PROSE = "The parser reads each token, checks the grammar and reports the line of any error it finds. "


def host_for(tmp_path: Path, window: int, turns: list[dict[str, Any]]) -> FakeHost:
    model = ModelInfo(provider="fake", id=f"m{window // 1024}k", context_window=window, max_tokens=4096)
    host = FakeHost(tmp_path, turns, settings={"compaction": {}}, model=model)  # pi's defaults
    host.provider.refuse_beyond_window = True
    return host


def chat(host: FakeHost, turns: int, text: str, size: int) -> None:
    for i in range(turns):
        host.add(user_message(f"question {i} " + (text * (size // len(text) + 1))[:size]))
        host.add(usage_assistant(f"answer {i} " + (text * 10)[:400], total=0))


def notices(host: FakeHost) -> list[str]:
    return [e["message"] for e in host.events_of("notify") if "left out of the summary request" in e["message"]]


async def test_the_endpoint_refuses_by_real_tokens(tmp_path: Path) -> None:
    """The test double sees what a real 8k model sees: 3,100 CJK characters are ~2,000 o200k
    tokens (chars/4 says 775)."""
    host = host_for(tmp_path, 8192, [summary_turn()])
    host.add(user_message(CJK * 500))
    from pi_tui.core.provider import CompletionRequest

    request = CompletionRequest(model=host.model, system_prompt="", messages=list(host.agent.messages), tools=[])  # type: ignore[arg-type]
    assert request_tokens(request) > 8192 > len(CJK * 500) / 4
    events = [e async for e in host.provider.stream(request)]
    final = events[-1]["error"]
    assert final["stopReason"] == "error" and "maximum context length is 8192 tokens" in final["errorMessage"]
    assert host.provider.script.remaining == 1  # the refusal used no scripted turn


async def test_compact_shrinks_a_cjk_session_on_an_8k_model(tmp_path: Path) -> None:
    """Counted in chars/4 the summary request was believed to fit and was ~2.5× the window in
    real tokens: refused on every try, so neither /compact nor an overflow could ever shrink the
    session. Counted in real tokens it fits; the oldest text that could not fit is named in the
    events pane."""
    host = host_for(tmp_path, 8192, [summary_turn("## Goal\n要約")])
    chat(host, 8, CJK, 3000)
    result = await host.runner.compact()
    assert result.summary.startswith("## Goal\n要約")
    (request,) = host.provider.requests
    assert request_tokens(request) + (request.max_tokens or 0) <= 8192
    (notice,) = notices(host)
    assert notice.startswith("Compaction: the oldest ") and "characters of the history were left out" in notice
    assert "m8k's 8,192-token window" in notice and "question 0" in notice  # what was dropped: the oldest
    dropped = int(notice.split("the oldest ")[1].split(" characters")[0].replace(",", ""))
    assert f"[... {dropped} earlier characters omitted" in text_of(request.messages[0]["content"])


async def test_on_a_32k_model_the_output_budget_gives_way_before_any_history(tmp_path: Path) -> None:
    """pi's defaults on a 32k window: a history summary asks for 13,107 output tokens, which left
    ~19k tokens for the conversation, and the oldest text was dropped before any model read it.
    The output budget is lowered first (not below 4,096; a summary cut off there is refused),
    so this ~24k-token history is sent whole."""
    host = host_for(tmp_path, 32_768, [summary_turn()])
    chat(host, 14, PROSE, 10_000)
    await host.runner.compact()
    (request,) = host.provider.requests
    prompt = text_of(request.messages[0]["content"])
    assert "earlier characters omitted" not in prompt and "[User]: question 0 " in prompt
    assert OUTPUT_FLOOR_TOKENS <= (request.max_tokens or 0) < 13_107
    assert request_tokens(request) + (request.max_tokens or 0) <= 32_768
    assert notices(host) == []


async def test_the_output_budget_is_untouched_when_the_request_fits(tmp_path: Path) -> None:
    host = host_for(tmp_path, 32_768, [summary_turn()])
    chat(host, 10, PROSE, 6_000)
    await host.runner.compact()
    (request,) = host.provider.requests
    assert request.max_tokens == 13_107  # pi's floor(0.8 × 16,384)
    assert count_tokens_exact(text_of(request.messages[0]["content"])) < 19_000
