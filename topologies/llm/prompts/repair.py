"""Task ``repair``: show the model its rejected reply and the error, ask for a corrected one.

The response model is the task's own (``plan_update.PlanReply``); the repair turn appends two
messages to the original conversation so the model keeps the event and context in view.
"""

from __future__ import annotations

TASK = "repair"
MAX_ECHO_CHARS = 6000

REPAIR_PROMPT = """\
Your reply was rejected and nothing was applied.
Error: {error}
Fix exactly this problem and reply with the complete corrected UpdatePlan JSON object only \
({{"ops": [...], "notes": "..."}}). Use only the ids shown ("E", I.., W.., B.., R..) and refs \
n1, n2, ... for new nodes. If you cannot fix it, reply {{"ops": [], "notes": "skipped"}}."""


def build_repair_messages(
    messages: list[dict[str, str]], reply_text: str, error: str
) -> list[dict[str, str]]:
    echoed = reply_text if len(reply_text) <= MAX_ECHO_CHARS else reply_text[:MAX_ECHO_CHARS]
    return [
        *messages,
        {"role": "assistant", "content": echoed or "(empty reply)"},
        {"role": "user", "content": REPAIR_PROMPT.format(error=error[:1000])},
    ]
