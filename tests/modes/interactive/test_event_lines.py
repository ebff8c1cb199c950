from __future__ import annotations

from pi_tui.modes.interactive.event_lines import describe_event


def test_compaction_end_reports_reason_tokens_kept_entry_and_duration():
    line = describe_event({
        "type": "compaction_end", "reason": "threshold", "aborted": False, "willRetry": False,
        "result": {"summary": "s", "firstKeptEntryId": "a3f9c0de11", "tokensBefore": 7412},
        "tokensAfter": 1980, "durationMs": 3100,
    })
    assert line is not None
    assert line.title == "compaction ✓"
    assert line.detail == "threshold · 7,412 → 1,980 tokens · kept from #a3f9c0de · 3.1s"


def test_overflow_compaction_is_called_recovery():
    start = describe_event({"type": "compaction_start", "reason": "overflow"})
    assert start is not None and start.title == "overflow → compaction ▶" and start.severity == "warning"
    end = describe_event({"type": "compaction_end", "reason": "overflow", "aborted": False, "willRetry": True,
                          "result": {"summary": "", "firstKeptEntryId": "x", "tokensBefore": 9000}})
    assert end is not None and "overflow recovery" in end.detail and "retrying the request" in end.detail


def test_failed_and_cancelled_compactions():
    failed = describe_event({"type": "compaction_end", "reason": "manual", "aborted": False, "willRetry": False,
                             "result": None, "errorMessage": "Compaction failed: boom"})
    assert failed is not None and (failed.title, failed.detail, failed.severity) == ("compaction failed", "boom", "error")
    cancelled = describe_event({"type": "compaction_end", "reason": "manual", "aborted": True, "willRetry": False,
                                "result": None})
    assert cancelled is not None and cancelled.title == "compaction cancelled"
    assert cancelled.severity == "warning" and "✓" not in cancelled.title


def test_a_compaction_without_a_result_says_it_was_skipped():
    skipped = describe_event({"type": "compaction_end", "reason": "threshold", "aborted": False,
                              "willRetry": False, "result": None})
    assert skipped is not None
    assert skipped.title == "compaction skipped: nothing to compact"
    assert "✓" not in skipped.title and skipped.severity == "info" and skipped.detail == "threshold"
    missing = describe_event({"type": "compaction_end", "reason": "manual", "aborted": False, "willRetry": False})
    assert missing is not None and missing.title.startswith("compaction skipped")


def test_retry_artifact_reduction_extension_model_thinking():
    retry = describe_event({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000,
                            "errorMessage": "429 rate limited"})
    assert retry is not None and retry.title == "retry 1/3 in 2s" and retry.detail == "429 rate limited"
    artifact = describe_event({"type": "artifact_saved", "toolCallId": "c", "toolName": "read",
                               "path": "s.artifacts/1.txt", "originalBytes": 86016})
    assert artifact is not None and artifact.detail == "read → 84.0KB → s.artifacts/1.txt"
    micro = describe_event({"type": "context_reduced", "step": "micro", "bytesBefore": 1, "bytesAfter": 0,
                            "tokensBefore": 12000, "tokensAfter": 2200, "detail": "6 results cleared"})
    assert micro is not None and micro.title == "micro: 6 results cleared"
    assert micro.detail == "12,000 → 2,200 tokens (−9,800)"
    ext = describe_event({"type": "extension_error", "extensionPath": "/x/ext/guard.py", "event": "tool_call",
                          "error": "boom"})
    assert ext is not None and ext.detail == "guard.py (tool_call): boom"
    model = describe_event({"type": "model_changed", "provider": "openai", "modelId": "gpt-4o"})
    assert model is not None and model.title == "model → openai/gpt-4o"
    thinking = describe_event({"type": "thinking_level_changed", "level": "high"})
    assert thinking is not None and thinking.title == "thinking → high"


def test_streaming_events_are_not_in_the_pane():
    for kind in ("message_update", "message_start", "tool_execution_start", "agent_start", "queue_update"):
        assert describe_event({"type": kind}) is None


def test_subagent_start_and_end_lines():
    from pi_tui.modes.interactive.event_lines import describe_event

    start = describe_event({"type": "subagent_start", "agent": "explore", "description": "find it", "model": "a/b"})
    assert start is not None and start.title == "subagent ▶ explore" and start.detail == "find it · a/b"
    end = describe_event({"type": "subagent_end", "agent": "explore", "status": "completed",
                          "usage": {"turns": 3, "totalTokens": 12345, "cost": 0.0123}})
    assert end is not None and (end.title, end.severity) == ("subagent ✓", "success")
    assert end.detail == "explore · 3 turns · 12,345 tokens · $0.012"
    failed = describe_event({"type": "subagent_end", "agent": "general", "status": "error", "usage": None})
    assert failed is not None and (failed.title, failed.severity) == ("subagent ✗", "error")
