"""Reactions: chat turns that only answer the turn before ("That's awesome, so proud of you!").

Months of chat between two friends are half replies of this kind: praise, thanks, sympathy,
greetings. Their embeddings carry the speaker's name and the mood, not a thing, so replies
from every theme sit close to each other and gather into one folder named for the mood
("Support" holding 292 turns of one conversation: ``docs/boundaries.md``). A person files such
a reply with what it answers, or nowhere.

A turn is a **reaction** when its parse names no thing of its own: every noun is a person's
name, a feeling, a courtesy or support act, a general noun, an amount or a time word, or lies
in a social formula or routine ("take care", "good luck", "long time no see"), and it names
no number or date and shares no attachment. The words it may use come from closed classes of
the literature, never from the chats it is tested on:

- feelings: the emotion names of Shaver, Schwartz, Kirson and O'Connor, "Emotion knowledge:
  further exploration of a prototype approach" (JPSP 52(6), 1987), their hierarchy, with the
  abstract nouns of their adjectives (``happiness``);
- courtesy acts: the nouns of the expressive illocutionary verbs of Searle and Vanderveken,
  *Foundations of Illocutionary Logic* (1985) (thank, congratulate, apologise,
  condole, compliment, praise, welcome, greet, ...);
- support acts: the emotional, esteem and informational support categories of Cutrona and
  Suhr's Social Support Behavior Code ("Controllability of stressful events and satisfaction
  with spouse support behaviors", Communication Research 19(2), 1992);
- general nouns: Halliday and Hasan, *Cohesion in English* (1976), chapter 6 ("thing",
  "stuff", "matter", "idea", "people", ...), which refer back rather than name;
- social formulas: ``topologies.lexicon.SOCIAL_FORMULAS``, and the greeting, leave-taking
  and praise routines of Aijmer, *Conversational Routines in English* (1996) (``ROUTINES``);
- interjections are no nouns; one the tagger reads as a name ("Bye Nate!") opens a sentence
  and is followed by a punctuation mark or the addressee's name.

A turn that also names a thing ("Congrats on the new job!") is no reaction: the thing decides.

The turn a reaction answers is the previous event of the same chat channel (the ``channel``
attribute its source sent; turns without one are of one unnamed channel), at most
``REPLY_WINDOW`` earlier: read from the entity index's events by time, no scan.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from datetime import timedelta
from typing import Any

from schemas.graph import Node, NodeKind
from topologies.entities import EntityHolder
from topologies.goals import formula_spans
from topologies.graph import raw_attr
from topologies.lexicon import CALENDAR_WORDS, DAY_WORDS, QUANTITY_NOUNS, wordset
from topologies.naming.phrases import TIME_UNITS, PhraseParser, shared_parser

REPLY_WINDOW = timedelta(hours=1)  # a turn this much later still answers the one before
MAX_TEXT = 600  # characters of a turn read for its things (replies are short)
MAX_LOOKBACK = 8  # events before a turn looked at for the one it answers

# emotion names (Shaver et al. 1987; lemmas, and the nouns of their adjectives)
FEELING_NOUNS = wordset(
    "adoration affection love fondness liking attraction caring tenderness compassion "
    "sentimentality arousal desire lust passion infatuation longing amusement bliss "
    "cheerfulness gaiety glee jolliness joviality joy delight enjoyment gladness happiness "
    "jubilation elation satisfaction ecstasy euphoria enthusiasm zeal zest excitement thrill "
    "exhilaration contentment pleasure pride triumph eagerness hope optimism enthrallment "
    "rapture relief amazement surprise astonishment aggravation irritation agitation "
    "annoyance grouchiness grumpiness exasperation frustration anger rage outrage fury wrath "
    "hostility ferocity bitterness hate loathing scorn spite vengefulness dislike resentment "
    "disgust revulsion contempt envy jealousy torment agony suffering hurt anguish depression "
    "despair hopelessness gloom glumness sadness unhappiness grief sorrow woe misery "
    "melancholy dismay disappointment displeasure guilt shame regret remorse alienation "
    "isolation neglect loneliness rejection homesickness defeat dejection insecurity "
    "embarrassment humiliation insult pity sympathy alarm shock fear fright horror terror "
    "panic hysteria mortification anxiety nervousness tenseness uneasiness apprehension worry "
    "distress dread "
    # ... and, not in their hierarchy: the words for feeling itself, and the enjoyment and
    # gratitude of everyday speech
    "emotion emotions feeling feelings mood fun blast gratitude thankfulness kindness warmth"
)
# nouns of expressive acts (Searle and Vanderveken 1985) and their everyday forms
COURTESY_NOUNS = wordset(
    "thanks thank congratulation congratulations congrats congrat kudos kudo apology "
    "apologies condolence condolences complaint lament compliment compliments praise welcome "
    "greeting greetings wish wishes regards cheers cheer luck blessing blessings"
)
# support acts of the Social Support Behavior Code (Cutrona and Suhr 1992)
SUPPORT_NOUNS = wordset(
    "support encouragement reassurance comfort empathy understanding validation care "
    "concern advice suggestion feedback help assistance listening prayer prayers motivation "
    "inspiration"
)
# general nouns (Halliday and Hasan 1976, chapter 6), and "news" of the shell nouns (Schmid,
# *English Abstract Nouns as Conceptual Shells*, 2000): they stand for what was said
GENERAL_NOUNS = wordset(
    "people person man woman child boy girl creature thing things object stuff business "
    "affair matter move place question idea fact one time moment way life world news"
)
_EMPTY_NOUNS = (
    FEELING_NOUNS | COURTESY_NOUNS | SUPPORT_NOUNS | GENERAL_NOUNS | QUANTITY_NOUNS
    | TIME_UNITS | DAY_WORDS | CALENDAR_WORDS
)  # fmt: skip
_SHARED = re.compile(r"\[shares? [^\]]*\]", re.IGNORECASE)  # an attachment is a thing shared


# conversational routines of greeting, leave-taking and praise (Aijmer, *Conversational
# Routines in English*, 1996) that SOCIAL_FORMULAS, written for goal cues, leaves out
ROUTINES = re.compile(
    r"\b(?:long\s+time\s+no\s+(?:see|talk|chat|hear)|well\s+done|"
    r"(?:good|great|nice|awesome|amazing)\s+(?:job|work)|"
    r"(?:good|great|nice|lovely|fun)\s+(?:chatting|talking|catching\s+up|to\s+(?:see|hear))"
    r")\b",
    re.IGNORECASE,
)


def names_a_thing(doc: Any, names: Container[str]) -> bool:
    """Whether a parsed turn names a thing of its own outside its social formulas and
    routines: a noun that is no person's name (of ``names``, lower case), feeling, courtesy
    or support act, general noun, amount or time word, or a number or a date."""
    spans = [*formula_spans(doc.text), *(m.span() for m in ROUTINES.finditer(doc.text))]
    for token in doc:
        if any(start <= token.idx < end for start, end in spans):
            continue
        if _content(token, names):
            return True
    return False


def _content(token: Any, names: Container[str]) -> bool:
    """A word that says what the turn is about: a number or a date ("two people", "on the
    14th": who comes and when), or a noun that is no person's name and no empty noun."""
    if token.like_num or any(ch.isdigit() for ch in token.text):
        return True
    if token.pos_ not in ("NOUN", "PROPN"):
        return False
    lemma, word = token.lemma_.lower(), token.lower_
    if lemma in _EMPTY_NOUNS or word in _EMPTY_NOUNS:
        return False
    if word in names or lemma in names:
        return False
    return not _misread_interjection(token, names)


def _misread_interjection(token: Any, names: Container[str]) -> bool:
    """A capitalised word opening a sentence, then a punctuation mark or the addressee's
    name, read as a name ("Yep, John", "Aww!", "Bye Nate!"): an interjection the tagger did
    not know, as a vocative's name follows it. (A place said alone, "Paris!", reads so too.)"""
    if token.pos_ != "PROPN" or not token.is_sent_start:
        return False
    after = token.nbor(1) if token.i + 1 < len(token.doc) else None
    return after is None or after.is_punct or after.lower_ in names


def is_reaction(text: str, names: Container[str], parser: PhraseParser | None = None) -> bool:
    """Whether a chat turn's text only reacts: it names no thing (``names_a_thing``) and
    shares no attachment."""
    body = turn_text(text)
    if not body:
        return False
    # without the entity recogniser (nothing here reads entities), each text once: a turn
    # is read when it is planned and again as a neighbour of the turns after it
    doc = (parser or shared_parser()).parse_without_entities(body)
    return not names_a_thing(doc, names)


def turn_text(text: str) -> str:
    """What :func:`is_reaction` parses of a chat turn's text: "" when it shares an
    attachment (a reaction shares none) or says nothing."""
    return "" if _SHARED.search(text) else text.strip()[:MAX_TEXT]


def turn_texts(nodes: Iterable[Node]) -> list[str]:
    """What :func:`reacts` parses of the EVENT nodes (their chat turns' texts): a batch's
    fold reads them all, so it parses them first, in one call (``PhraseParser.read``)."""
    return [text for node in nodes if node.source == "chat" and (text := turn_text(node.text))]


def reacts(memory: EntityHolder, node: Node, parser: PhraseParser | None = None) -> bool:
    """Whether an EVENT node is a chat turn that only reacts to the one before."""
    if node.kind != NodeKind.EVENT or node.source != "chat":
        return False
    return is_reaction(node.text, _People(memory, node), parser)


class _People:
    """The names of the people a memory knows and of a turn's participants, lower case: read
    from the entity index only when a word is asked about (most reactions ask none)."""

    def __init__(self, memory: EntityHolder, node: Node) -> None:
        self._memory, self._node = memory, node
        self._names: frozenset[str] | None = None

    def __contains__(self, word: object) -> bool:
        if self._names is None:
            found = set(self._memory.entities.people())
            for participant in self._node.participants:
                found.update(w.lower() for w in re.findall(r"[^\W\d_]+", participant))
            self._names = frozenset(found)
        return word in self._names


def channel(node: Node) -> str:
    """The chat channel of a turn as its source named it ("" for one without)."""
    value = raw_attr(node, "channel") or raw_attr(node, "thread_id")
    return str(value) if value else ""


def answered_turn(memory: EntityHolder, node: Node) -> Node | None:
    """The turn a chat turn answers: the latest earlier chat event of its channel, at most
    ``REPLY_WINDOW`` before it; None when there is none."""
    if node.ts is None:
        return None
    wanted = channel(node)
    for other_id in memory.entities.latest_before(node.ts, node.ts - REPLY_WINDOW, MAX_LOOKBACK):
        other = memory.graph.get(other_id)
        if other is None or other.id == node.id or other.source != "chat":
            continue
        if channel(other) == wanted:
            return other
    return None
