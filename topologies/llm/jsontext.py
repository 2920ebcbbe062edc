"""Getting one JSON object out of whatever a model said.

Strips ``<think>...</think>`` blocks (also an unterminated one) and Markdown code fences,
then parses the text, or failing that the first balanced ``{...}`` object found in it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from schemas.errors import LLMError

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"<(think|thinking|reasoning)>.*", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


class ReplyFormatError(LLMError):
    """The reply holds no parseable JSON object."""


def strip_reasoning(text: str) -> str:
    """Drop closed reasoning blocks, and everything before a stray closing tag (templates that
    open ``<think>`` themselves make the model emit only ``...</think>``)."""
    text = _THINK.sub("", text)
    lower = text.lower()
    for tag in ("</think>", "</thinking>", "</reasoning>"):
        idx = lower.rfind(tag)
        if idx >= 0:
            text = text[idx + len(tag) :]
            lower = text.lower()
    return text.strip()


def _balanced_objects(text: str) -> list[str]:
    """Every top-level balanced {...} span, string-aware, in order."""
    spans: list[str] = []
    depth, start, in_string, escaped = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"' and depth > 0:
            in_string = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def extract_json_object(text: str | None) -> dict[str, Any]:
    """The JSON object in a model reply; ReplyFormatError names what was wrong."""
    if not text or not text.strip():
        raise ReplyFormatError("the reply was empty")
    cleaned = strip_reasoning(text)
    candidates: list[str] = [cleaned]
    candidates.extend(m.group(1).strip() for m in _FENCE.finditer(cleaned))
    objects = _balanced_objects(cleaned)
    if _OPEN_THINK.search(cleaned):  # unclosed reasoning: the answer is most likely last
        objects.reverse()
    candidates.extend(objects)
    first_error = ""
    for candidate in candidates:
        try:
            value = json.loads(candidate, strict=False)  # raw newlines in strings
        except ValueError as exc:
            first_error = first_error or f"{exc}"
            continue
        if isinstance(value, dict):
            return value
        first_error = first_error or f"expected a JSON object, got {type(value).__name__}"
    raise ReplyFormatError(f"no JSON object in the reply ({first_error or 'nothing found'})")


_NOTES = re.compile(r'"notes"\s*:\s*"((?:[^"\\]|\\.)*)"')
_OPS = re.compile(r'"ops"\s*:\s*\[')


def complete_ops_prefix(text: str | None) -> dict[str, Any] | None:
    """The complete ops of a plan reply cut short (at the token limit, in a repetition loop):
    ``{"notes": ..., "ops": [every op object that closed]}``, or None when none did."""
    if not text:
        return None
    cleaned = strip_reasoning(text)
    match = _OPS.search(cleaned)
    if match is None:
        return None
    ops: list[Any] = []
    for span in _balanced_objects(cleaned[match.end() :]):
        try:
            value = json.loads(span, strict=False)
        except ValueError:
            continue
        if isinstance(value, dict):
            ops.append(value)
    if not ops:
        return None
    notes = _NOTES.search(cleaned)
    try:
        note = json.loads(f'"{notes.group(1)}"', strict=False) if notes else ""
    except ValueError:
        note = ""
    return {"notes": note, "ops": ops}
