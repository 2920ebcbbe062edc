"""The MCP server: foldmem's memory as tools an agent chooses among, and its pending intents
as a resource. Built with the official SDK (``mcp.server.MCPServer``) over a
:class:`~stream_app.mcp.backends.MemoryBackend`.

Every tool takes an optional ``tenant`` (default: the server's default tenant, the person
whose memory this is). A refusal the caller can act on (a tenant or node that does not exist,
a transition an intent cannot make, an argument out of range) comes back as a tool error with
the reason, never as a crash of the server.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, ParamSpec, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from schemas.errors import FoldmemError
from schemas.graph import NodeKind
from schemas.intents import IntentStatus
from schemas.query import QueryRequest, RecallRequest, TimeRange
from stream_app.api.ingest import MAX_BATCH
from stream_app.mcp.backends import MemoryBackend

P = ParamSpec("P")
R = TypeVar("R")

INSTRUCTIONS = """\
foldmem is this user's long-term memory: their calendar, mail, chat and notes folded into a \
graph of events, facts, concepts (themes) and intents (goals and to-dos it noticed). Use \
`query` to look anything up (it cites the source events), `list_intents` to see what the \
user has to do, `get_node` to open a result, `chain` to see how a belief changed, and \
`set_intent_status` when the user says a to-do is done, dropped or postponed. Nothing here \
calls a language model; answers are fast and deterministic."""

VERBS: dict[str, IntentStatus] = {
    "resolve": IntentStatus.RESOLVED,
    "reject": IntentStatus.REJECTED,
    "defer": IntentStatus.DEFERRED,
    "schedule": IntentStatus.ACTION_SCHEDULED,
    "reopen": IntentStatus.PENDING,
}

Tenant = Annotated[
    str | None,
    Field(description="Whose memory; leave empty for the default user of this server."),
]


def tool_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """A refusal (FoldmemError, invalid values) becomes a tool error with its reason."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except ValidationError as exc:
            problems = (f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
            raise ToolError("invalid arguments: " + "; ".join(problems)) from exc
        except (FoldmemError, ValueError) as exc:
            raise ToolError(str(exc)) from exc

    return wrapper


def why_ranked(explanation: dict[str, Any]) -> str:
    """The signals that ranked a hit, in words."""
    notes = []
    if explanation.get("bm25_rank"):
        notes.append(f"keyword rank {explanation['bm25_rank']}")
    if explanation.get("dense_rank"):
        notes.append(f"meaning rank {explanation['dense_rank']}")
    if explanation.get("hops"):
        notes.append(f"{explanation['hops']} hop(s) from a direct hit in the graph")
    if explanation.get("surfaced_by"):
        notes.append(f"{explanation['surfaced_by']} matching events support it")
    if explanation.get("anchors"):
        notes.append("names " + ", ".join(explanation["anchors"]))
    if explanation.get("shared_name"):
        notes.append(f"shares the name {explanation['shared_name']}")
    if explanation.get("in_period"):
        notes.append("in the period asked about")
    if explanation.get("collapsed"):
        notes.append(f"{len(explanation['collapsed'])} similar items merged into it")
    return "; ".join(notes) or "related"


def _hits(response: dict[str, Any]) -> list[dict[str, Any]]:
    hits = []
    for item in response["items"]:
        hit = {
            "node_id": item["node_id"],
            "kind": item["kind"],
            "title": item["title"],
            "text": item["text"],
            "when": item.get("ts"),
            "score": item["score"],
            "cites_events": item["event_ids"],
            "why": why_ranked(item["explanation"]),
        }
        if item.get("chain"):
            hit["chain"] = [
                {"text": link["text"], "from": link.get("valid_from"), "current": link["current"]}
                for link in item["chain"]
            ]
        hits.append(hit)
    return hits


def _between(since: datetime | None, until: datetime | None) -> TimeRange | None:
    """The period asked for; an open end is the beginning or the end of time."""
    if since is None and until is None:
        return None
    return TimeRange(
        start=since or datetime.min.replace(tzinfo=UTC),
        end=until or datetime.max.replace(tzinfo=UTC),
    )


def build_server(backend: MemoryBackend, default_tenant: str) -> MCPServer:
    server: MCPServer = MCPServer("foldmem", instructions=INSTRUCTIONS, version="0.1.0")
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def who(tenant: str | None) -> str:
        return tenant or default_tenant

    @server.tool(annotations=read_only)
    @tool_errors
    async def query(
        text: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4000,
                description="What to look for, in the user's words: a question, a name, a topic.",
            ),
        ],
        k: Annotated[int, Field(ge=1, le=50, description="How many hits (default 10).")] = 10,
        kinds: Annotated[
            list[NodeKind] | None,
            Field(description="Only these kinds (EVENT, FACT, CONCEPT, INTENT); default all."),
        ] = None,
        as_of: Annotated[
            datetime | None,
            Field(description="Only what was known at this time (ISO 8601 with offset)."),
        ] = None,
        since: Annotated[
            datetime | None, Field(description="Only events from this time (ISO 8601, offset).")
        ] = None,
        until: Annotated[
            datetime | None, Field(description="Only events up to this time (ISO 8601, offset).")
        ] = None,
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """Search the user's memory: events (mail, chat, calendar, notes), facts they stated,
        themes and goals. The first tool to use for any question about the user's life, plans,
        people or past. Each hit cites the ids of the source events it rests on
        (`cites_events`) and says why it ranked (`why`); a fact that changed over time carries
        its whole `chain` of revisions. Times with a UTC offset."""
        between = _between(since, until)
        request = QueryRequest(text=text, k=k, kinds=kinds, as_of=as_of, between=between)
        response = await backend.query(who(tenant), request)
        return {"tenant": response["tenant"], "query": text, "hits": _hits(response)}

    @server.tool()
    @tool_errors
    async def recall(
        cue: Annotated[str, Field(min_length=1, max_length=4000, description="The cue.")],
        threshold: Annotated[
            float, Field(ge=0.0, le=1.0, description="Least recall probability (default 0.86).")
        ] = 0.86,
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many.")] = 10,
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """Cued recall, as a person remembers: the memories a cue brings back with a recall
        probability of at least `threshold` (relevance, time since last recalled, how often
        recalled). Recalling strengthens them (this writes). Prefer `query` to search; use
        `recall` for what is salient to the user right now about the cue."""
        request = RecallRequest(text=cue, threshold=threshold, limit=limit)
        return await backend.recall(who(tenant), request)

    @server.tool(annotations=read_only)
    @tool_errors
    async def list_intents(
        status: Annotated[
            Literal["pending", "scheduled", "deferred", "resolved", "closed", "all"],
            Field(
                description="Which intents: pending (default: still to do), scheduled, "
                "deferred, resolved, closed (rejected or expired), or all."
            ),
        ] = "pending",
        category: Annotated[
            str | None, Field(max_length=80, description="Only this category.")
        ] = None,
        offset: Annotated[int, Field(ge=0, description="Skip this many (paging).")] = 0,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many.")] = 20,
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """The user's goals and to-dos that emerged from their events (intents), soonest
        deadline first: title, status, category, deadline and the sentence that says why it
        emerged. Use to answer 'what do I have to do', before suggesting plans, and to find
        the id for `set_intent_status` or `get_node` (which shows an intent's evidence)."""
        return await backend.intents(who(tenant), status, category, offset, limit)

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    @tool_errors
    async def set_intent_status(
        intent_id: Annotated[
            str, Field(min_length=1, max_length=200, description="From list_intents.")
        ],
        status: Annotated[
            Literal["resolve", "reject", "defer", "schedule", "reopen"],
            Field(
                description="resolve: done; reject: not a real goal or no longer wanted; "
                "defer: later; schedule: an action is planned; reopen: back to pending."
            ),
        ],
        note: Annotated[str, Field(max_length=4096, description="Why, in a few words.")] = "",
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """Change an intent's status when the user says a to-do is done, dropped, postponed
        or planned. Resolved and rejected are final. Returns the intent as it is now."""
        return await backend.set_intent_status(who(tenant), intent_id, VERBS[status], note)

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
    @tool_errors
    async def add_events(
        events: Annotated[
            list[dict[str, Any]],
            Field(
                min_length=1,
                max_length=MAX_BATCH,
                description="RawEvents: each {id (unique, stable), source (calendar, email, "
                "chat, note, ...), ts (ISO 8601 with offset), title, body, participants "
                "(optional list)}.",
            ),
        ],
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """Add things that happened to the user's memory (a message, a note, an appointment):
        each event is validated like POST /tenants/{tenant}/events and folded at once; the
        answer says per event folded, duplicate (same id seen before) or rejected with the
        field at fault. Only for events the user shared; not for your own conclusions."""
        return await backend.add_events(who(tenant), events)

    @server.tool(annotations=read_only)
    @tool_errors
    async def get_node(
        node_id: Annotated[
            str, Field(min_length=1, max_length=200, description="A node_id or intent id.")
        ],
        neighbours: Annotated[
            int, Field(ge=1, le=100, description="At most this many neighbours (default 20).")
        ] = 20,
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """Open one memory item (from a `query` hit or `list_intents`): the node and its
        strongest neighbours with the kind of each link (GROUNDS, TRIGGERS, SUPERSEDES, ...).
        For an intent, also its evidence events, supporting concepts and why it emerged."""
        found = await backend.node(who(tenant), node_id, neighbours)
        if found["node"]["kind"] == NodeKind.INTENT.value:
            detail = await backend.intent(who(tenant), found["node"]["id"])
            found["intent"] = {k: detail[k] for k in ("why", "evidence", "concepts")}
        return found

    @server.tool(annotations=read_only)
    @tool_errors
    async def chain(
        node_id: Annotated[
            str, Field(min_length=1, max_length=200, description="A FACT or EVENT node_id.")
        ],
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """How a belief changed over time: the supersedes chain of a fact (or of the fact read
        from an event), oldest first, each revision with its validity and source event; the
        last is current. Use when the user updated something (a new date, address, price,
        opinion) and you need what held when."""
        return await backend.chain(who(tenant), node_id)

    async def pending(tenant: str) -> str:
        try:
            page = await backend.intents(tenant, "pending", None, 0, 100)
        except FoldmemError as exc:
            raise ResourceError(str(exc)) from exc
        return json.dumps(page, ensure_ascii=False)

    @server.resource(
        "foldmem://intents/pending",
        name="pending_intents",
        description="The default user's pending intents (to-dos), soonest deadline first.",
        mime_type="application/json",
    )
    async def pending_default() -> str:
        return await pending(default_tenant)

    @server.resource(
        "foldmem://tenants/{tenant}/intents/pending",
        name="tenant_pending_intents",
        description="A tenant's pending intents (to-dos), soonest deadline first.",
        mime_type="application/json",
    )
    async def pending_of(tenant: str) -> str:
        return await pending(tenant)

    return server
