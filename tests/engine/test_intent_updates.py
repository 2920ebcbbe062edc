"""``intent.updated``: a consumer of the intents topic holds each intent's current title and
deadline, not the ones it was announced with (a goal first seen in its opening step, "Locate
the leak", comes to be named for what the evidence says it is)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fold_helpers import Step
from test_fold_batch import heuristic_engine, sample_events
from test_goal_titles import REVIEW, event, fold, launch, the_intent

from schemas.graph import NodeKind
from schemas.intents import IntentMessage
from schemas.plans import UpdateNode, UpdatePlan
from topologies.config import EngineConfig
from topologies.embedding import HashingEmbedder
from topologies.executor import PlanExecutor
from topologies.memory import TenantMemory
from topologies.scope import INTENT_REVISION_ATTR, FoldScope

POSTPONED = datetime(2026, 11, 26, 14, 0, tzinfo=UTC)


async def postponed_review() -> tuple[TenantMemory, list[IntentMessage]]:
    """The launch's review, then a note a day after it that postpones it to 26 Nov."""
    script, events = launch()
    script["l-4"] = Step(["Go/no-go review"], category="work", deadline=POSTPONED)
    text = "The go/no-go review was postponed to 26 Nov, I need to send the deck by 26 Nov"
    events.append(event("l-4", text, REVIEW + timedelta(days=1), "note"))
    return await fold(script, events)


async def test_a_moved_deadline_is_sent_as_an_update_saying_what_it_was() -> None:
    memory, messages = await postponed_review()

    updates = [m for m in messages if m.type == "intent.updated"]
    assert updates, [m.type for m in messages]
    last = updates[-1]
    assert last.intent.deadline is not None and last.intent.deadline.date() == POSTPONED.date()
    assert last.previous_deadline is not None and last.previous_deadline.date() == REVIEW.date()
    assert last.previous_title is not None and last.previous_title.endswith("(by 19 Nov)")
    assert last.intent.title == the_intent(memory).title
    assert last.previous_status == last.intent.status  # no status change: an update


async def test_updates_count_their_revisions_so_each_has_its_own_message_id() -> None:
    _, messages = await postponed_review()

    ids = [m.message_id for m in messages]
    assert len(ids) == len(set(ids))
    updates = [m for m in messages if m.type == "intent.updated"]
    assert [m.revision for m in updates] == sorted({m.revision for m in updates})
    assert all(m.message_id.endswith(f":updated:{m.revision}") for m in updates)


async def test_a_consumer_applying_the_messages_in_order_holds_the_graphs_intents() -> None:
    """The sample stream, as a notifier sees it: after every message, in order, each intent
    it holds has the title, deadline and status the memory gives it at the end."""
    engine = heuristic_engine(HashingEmbedder(dim=256))
    memory = engine.new_memory("alice")
    held: dict[str, IntentMessage] = {}
    for raw in sample_events(157):
        for message in (await engine.fold(memory, raw)).messages:
            held[message.intent.id] = message

    nodes = {n.id: n for n in memory.graph.nodes(NodeKind.INTENT)}
    assert held.keys() == nodes.keys()
    for intent_id, message in held.items():
        node = nodes[intent_id]
        assert (message.intent.title, message.intent.deadline, message.intent.status) == (
            node.title,
            node.deadline,
            node.status,
        )
    assert any(m.type == "intent.updated" for m in held.values())


async def test_a_plan_cannot_reset_the_revision_its_message_ids_count_with() -> None:
    """A planner's attrs (an LLM's, say) carrying "revision" leave the engine's counter alone:
    a reset would give a later update the message id of an earlier one, which a notifier
    that delivers each id once would drop."""
    memory, _ = await postponed_review()
    intent = the_intent(memory)
    before = intent.attrs[INTENT_REVISION_ATTR]
    executor = PlanExecutor(HashingEmbedder(dim=256), EngineConfig())
    rename = UpdateNode(id=intent.id, title="Brief support", attrs={INTENT_REVISION_ATTR: 0})
    scope = FoldScope("alice", "l-5", None, REVIEW + timedelta(days=2))

    with memory.transaction():
        executor.apply(memory, UpdatePlan(ops=[rename], planner="llm"), scope)

    assert the_intent(memory).attrs[INTENT_REVISION_ATTR] == before + 1
