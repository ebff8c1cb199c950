"""Prompts for the summarizers (pi-behaviour.md §2.7, §3), written in pi-tui's own words.

They keep pi's section structure, because the structure is what makes a summary usable as a
checkpoint: the next model needs the goal, the user's constraints, what is done and what is not,
the decisions taken and the exact names it will need again.
"""

from __future__ import annotations

SUMMARIZATION_SYSTEM_PROMPT = (
    "You summarize conversations for context continuity. You will be shown a conversation between "
    "a user and an AI coding assistant. Do not continue that conversation and do not answer any "
    "question asked in it. Reply with the structured summary only, in the requested format."
)

_SECTIONS = """## Goal
[What the user is trying to achieve. Several goals may be listed.]

## Constraints & Preferences
- [Requirements, conventions or preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished work]

### In Progress
- [ ] [Work that was started and not finished]

### Blocked
- [Problems that stop progress, if any]

## Key Decisions
- **[Decision]**: [why it was taken]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, references or findings needed to continue, or "(none)"]"""

_UPDATE_SECTIONS = """## Goal
[Keep the previous goals; add any new ones]

## Constraints & Preferences
- [Keep the previous ones; add new ones, or "(none)"]

## Progress
### Done
- [x] [Previous done items, plus items finished since]

### In Progress
- [ ] [What is being worked on now]

### Blocked
- [Current blockers, if any]

## Key Decisions
- **[Decision]**: [why it was taken] (keep the previous decisions)

## Next Steps
1. [Updated to reflect what is left to do]

## Critical Context
- [Keep the important previous context; add new findings, or "(none)"]"""

SUMMARIZATION_PROMPT = f"""The conversation above is to be condensed into a structured checkpoint summary. Another language model will read this summary instead of the conversation and must be able to carry on the work from it.

Use this EXACT format:

{_SECTIONS}

Keep every section short. Preserve exact file paths, function names and error messages."""

UPDATE_SUMMARIZATION_PROMPT = f"""The conversation above contains NEW messages that happened after the summary in <previous-summary>. Merge them into that summary.

Rules:
- PRESERVE everything the previous summary records.
- ADD the new progress, decisions and context.
- When an In Progress item has been finished, move it to Done.
- Rewrite Next Steps to match what is now left to do.
- Preserve exact file paths, function names and error messages.
- Items that are clearly no longer relevant may be dropped.

Use this EXACT format:

{_UPDATE_SECTIONS}

Keep every section short. Preserve exact file paths, function names and error messages."""

TURN_PREFIX_SUMMARIZATION_PROMPT = """The conversation above is the PREFIX of a single turn that was too large to keep whole. The SUFFIX of the same turn (its most recent work) is kept verbatim and follows this summary.

Summarize the prefix so that the kept suffix makes sense:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions taken and work done in the prefix]

## Context for Suffix
- [What is needed to understand the kept suffix]

Be concise."""

BRANCH_SUMMARY_PROMPT = """The conversation above is a branch of the session that the user is now leaving. Summarize it so that the work done there is not lost if the user comes back to it later.

Use this EXACT format:

## Goal
[What the user was trying to achieve in this branch]

## Constraints & Preferences
- [Requirements or preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished work]

### In Progress
- [ ] [Work that was started and not finished]

### Blocked
- [Problems that stopped progress, if any]

## Key Decisions
- **[Decision]**: [why it was taken]

## Next Steps
1. [What would have come next]

Keep every section short. Preserve exact file paths, function names and error messages."""

BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\n"
    "Summary of that exploration:\n\n"
)
"""Model-visible: exact pi text (§3)."""

SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"
"""Model-visible: exact pi text (§2.7)."""

NO_PRIOR_HISTORY = "No prior history."
NO_BRANCH_CONTENT = "No content to summarize"


def summarization_prompt_text(
    conversation: str, *, previous_summary: str | None, custom_instructions: str | None
) -> str:
    """The one user message of a history-summary request."""
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    instructions = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
    if custom_instructions:
        instructions += f"\n\nAdditional focus: {custom_instructions}"
    return text + instructions


def turn_prefix_prompt_text(conversation: str) -> str:
    return f"<conversation>\n{conversation}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"


def branch_summary_prompt_text(
    conversation: str, *, custom_instructions: str | None, replace_instructions: bool
) -> str:
    if custom_instructions and replace_instructions:
        instructions = custom_instructions
    elif custom_instructions:
        instructions = f"{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom_instructions}"
    else:
        instructions = BRANCH_SUMMARY_PROMPT
    return f"<conversation>\n{conversation}\n</conversation>\n\n{instructions}"
