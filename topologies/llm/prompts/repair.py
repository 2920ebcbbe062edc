"""Task ``repair``: show the model its rejected reply and the error, ask for a corrected one.

The response model is the task's own (``plan_update``); the repair turn appends two messages
to the original conversation so the model keeps the event and context in view (and a local
server reuses the cached prefix). It offers no way out: an empty plan is not a repair, and a
reply that is still unusable falls back to the heuristic plan.
"""

from __future__ import annotations

TASK = "repair"
MAX_ECHO_CHARS = 3000

REPAIR_PROMPT = """\
Your reply could not be used and nothing was applied.
Error: {error}
Answer again with the complete JSON object {{"notes": "...", "ops": [...]}} for the same \
event. Use only E, the ids listed in MEMORY and your refs n1, n2, ... for new nodes; keep \
to the allowed src -> dst pairs; a few ops."""


def build_repair_messages(
    messages: list[dict[str, str]], reply_text: str, error: str
) -> list[dict[str, str]]:
    echoed = reply_text if len(reply_text) <= MAX_ECHO_CHARS else reply_text[:MAX_ECHO_CHARS]
    return [
        *messages,
        {"role": "assistant", "content": echoed or "(empty reply)"},
        {"role": "user", "content": REPAIR_PROMPT.format(error=error[:800])},
    ]
