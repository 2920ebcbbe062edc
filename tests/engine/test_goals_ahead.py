"""An intent only for a goal the person has (issue 11, item 3): a to-do is something someone
means to do from now on. A question about what the other person does, a past inability, what
a noun was an occasion for, and a book someone reads state none: LoCoMo-10's pending intents
read "Manage the time" (a friend's "How do you manage your time ...?"), "Help the team" ("I
couldn't play or help the team"), "Visit similar streets" ("an incredible experience to
visit similar streets") and "Add to the collage" ("a perfect opportunity to add to our
collage"), and "a book with a red cover" counted as a booking made."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from schemas.events import RawEvent
from topologies.engine import event_to_node
from topologies.goals import event_signals
from topologies.naming.phrases import PhraseParser

T0 = datetime(2024, 1, 2, 18, 0, tzinfo=UTC)


def actions(text: str) -> list[str]:
    (analysis,) = PhraseParser().analyse([("", text, frozenset({"tim", "john"}))])
    return [action.text for action in analysis.actions]


def commits(text: str) -> bool:
    event = RawEvent(
        id="e", tenant="tim", source="chat", ts=T0, title="", body=text, participants=["Tim"]
    )
    return event_signals(event_to_node(event, "n")).commitment


def test_a_question_about_what_the_other_does_is_no_to_do() -> None:
    text = "How do you manage your time and stay organized with all the projects and deadlines?"
    assert actions(text) == []


def test_a_question_about_the_others_plan_is_no_to_do() -> None:
    assert actions("Are you going to visit the old castle?") == []


def test_a_question_word_asks_for_a_fact_not_a_to_do() -> None:
    assert actions("Where'd you get the idea for it?") == []


@pytest.mark.parametrize(
    "text",
    [
        "How's the mindfulness workshops and reading going? Need any help?",
        "Let me know if you need help with a study plan!",
        "Want to grab lunch tomorrow?",
    ],
)
def test_help_offered_is_no_to_do_of_the_one_offered_it(text: str) -> None:
    assert actions(text) == []


def test_a_need_of_ones_own_stays_a_to_do() -> None:
    assert actions("I need a new passport before the trip.") == ["get a new passport"]


def test_when_asked_of_someone_is_a_request_with_a_day() -> None:
    assert actions("When can you send the deck?") == ["send the deck"]


def test_a_request_put_as_a_question_stays_a_to_do() -> None:
    assert actions("Could you book the meeting room?") == ["book the meeting room"]


def test_a_past_inability_is_no_to_do_for_any_of_its_verbs() -> None:
    text = "It was frustrating because I couldn't play or help the team."
    assert actions(text) == []


def test_a_verb_with_its_own_subject_after_a_negated_one_stays() -> None:
    assert actions("I can't come, but I'll send the deck.") == ["send the deck"]


def test_a_chance_someone_had_is_no_to_do() -> None:
    text = (
        "Last Friday I went to the car show. I saw some awesome cars and got to mess with car mods!"
    )
    assert actions(text) == []


def test_help_that_was_given_is_no_to_do() -> None:
    text = (
        "That's a close friend of mine who helped me get this painting published in the exhibition!"
    )
    assert actions(text) == []


def test_an_obligation_met_is_no_to_do() -> None:
    text = "It sucked because I had to miss some games and couldn't help my team."
    assert actions(text) == []


def test_what_a_thing_made_someone_do_is_no_to_do() -> None:
    """ "It made me realize" tells what happened, as "got to" and "had to" do: before,
    "Realize the importance" was a pending intent (LoCoMo-10, conv-48)."""
    text = "It made me realize the importance of incorporating relaxation and self-care."
    assert actions(text) == []


def test_making_someone_do_a_thing_ahead_stays_a_to_do() -> None:
    assert actions("You have to make them sign the lease.") == ["sign the lease"]


def test_help_asked_for_keeps_its_to_do() -> None:
    assert actions("Can you help me fix the sink?") == ["fix the sink"]


def test_have_got_to_is_an_obligation() -> None:
    assert actions("I've got to renew my passport.") == ["renew the passport"]


@pytest.mark.parametrize(
    "text",
    [
        "That was an incredible experience to visit similar streets like you shared.",
        "It's going to be a blast and a perfect opportunity to add to our collage.",
    ],
)
def test_an_infinitive_that_says_what_a_noun_was_is_no_to_do(text: str) -> None:
    assert actions(text) == []


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("I have a plan to renew my passport.", "renew the passport"),
        ("It's time to book the flights.", "book the flights"),
        ("Your request to reprocess a claim has been received.", "reprocess a claim"),
    ],
)
def test_an_infinitive_after_an_intention_stays_a_to_do(text: str, action: str) -> None:
    assert actions(text) == [action]


@pytest.mark.parametrize(
    "text",
    [
        "Harry Potter is my favorite book. It's so immersive!",
        "You rock! Keep it up! [shares a photo of a basketball ball and a book on a court]",
        "What book are you currently reading?",
        "Thanks for the book, it was great.",
    ],
)
def test_a_book_to_read_is_no_booking(text: str) -> None:
    assert not commits(text)


@pytest.mark.parametrize(
    "text",
    [
        "I need to book a table for Friday.",
        "Book the flights before the prices go up.",
        "Can you book it for us?",
        "Register for the 10k this week.",
    ],
)
def test_to_book_is_still_an_arrangement(text: str) -> None:
    assert commits(text)


@pytest.mark.parametrize(
    "text",
    [
        "Congrats, Tim! That's amazing news. So, where are you going to stay?",
        "Do you need to renew your passport?",
        "What do you plan to do next?",
    ],
)
def test_a_plan_asked_of_the_other_is_no_commitment(text: str) -> None:
    assert not commits(text)


@pytest.mark.parametrize(
    "text",
    [
        "Are you going to the party? I'm going to bring a cake.",
        "Can you send the deck by Friday?",
        "You have to try the new place!",
    ],
)
def test_a_request_or_the_writers_plan_beside_a_question_stays(text: str) -> None:
    assert commits(text)


# Review of the rules above (issue 11): everyday sentences of a goal ahead that they must not
# drop.


@pytest.mark.parametrize(
    "text",
    [
        "Can you remind me to renew the passport?",
        "Could you remind me to call the dentist on Monday?",
        "Can you please register us for the course?",
    ],
)
def test_a_request_put_as_a_question_is_a_commitment(text: str) -> None:
    assert commits(text)


@pytest.mark.parametrize(
    "text",
    [
        "Book flights to Lisbon before Friday.",
        "Note: book restaurant for Mum's birthday.",
        "Book tickets",
    ],
)
def test_a_note_that_starts_with_book_without_an_article_is_an_arrangement(text: str) -> None:
    assert commits(text)


def test_a_book_club_is_still_no_booking() -> None:
    assert not commits("My book club meets on Thursday.")


@pytest.mark.parametrize(
    "text", ["The plan is to submit on Friday.", "Our plan is to finish the draft by the 12th."]
)
def test_a_plan_stated_as_what_it_is_is_a_commitment(text: str) -> None:
    assert commits(text)


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("We got to book the venue before the 10th.", "book the venue"),
        ("We got to get the forms in by Friday.", "get the forms"),
        ("I got to call the landlord tomorrow.", "call the landlord"),
    ],
)
def test_got_to_with_a_day_ahead_is_an_obligation(text: str, action: str) -> None:
    assert actions(text) == [action]


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("I have an appointment to renew the passport on 3 Dec.", "renew the passport"),
        ("We have a meeting to finalize the budget on Monday.", "finalize the budget"),
    ],
)
def test_what_an_appointment_is_for_is_a_to_do(text: str, action: str) -> None:
    assert actions(text) == [action]


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("I wonder if I should book the hotel now.", "book the hotel"),
        ("Let me know if I should send the deck.", "send the deck"),
    ],
)
def test_a_question_about_ones_own_to_do_keeps_it(text: str, action: str) -> None:
    assert actions(text) == [action]


@pytest.mark.parametrize(
    "text",
    [
        "I'll let you know if I need any assistance with props or anything else.",
        "I found out I'm allergic, so who knows if I'll ever get a pet.",
    ],
)
def test_a_question_about_what_one_can_or_will_do_is_no_to_do(text: str) -> None:
    """LoCoMo-10: an offer of one's own and a doubt, no duty."""
    assert actions(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "I haven't had the chance to try scuba diving yet.",
        "We've got the right attitude to take on the harder things in life.",
        "Glad to have the opportunity to bond with your pets.",
    ],
)
def test_a_chance_or_an_attitude_one_has_is_no_to_do(text: str) -> None:
    """LoCoMo-10: what a chance or an attitude is for says what the noun is."""
    assert actions(text) == []


def test_got_to_before_a_thing_that_happened_is_still_a_chance() -> None:
    assert actions("Last Friday I got to meet the band before the show!") == []


def test_a_reminder_put_as_a_question_keeps_its_to_do() -> None:
    assert actions("Did you remember to book the table?") == ["book the table"]


def test_reading_cues_parses_no_sentence_when_a_plain_cue_commits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The parse is the one costly step of reading cues: "book" before "I need to" needs it
    no more than after."""

    def no_parse() -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr("topologies.naming.phrases.load_pipeline", no_parse)
    assert commits("Book club tonight, then I need to call Mum.")


def test_book_with_a_subject_is_a_booking_whatever_its_tag() -> None:
    """The sample's chat of Jonas: the tagger reads this "book" as a noun."""
    assert commits("Flights to BKK on 18 Dec went up again. Should I just book tonight?")


@pytest.mark.parametrize(
    "text",
    [
        "Impressive! That must have taken a lot of skill and determination.",
        "Seeing your old friend must have brought back so many memories.",
        "Taking initiative is a must if you wanna achieve your goals.",
        "Barcelona is a must-visit city! Definitely add it to your travel list!",
        "Wow, imagining how your music affects others must be incredible!",
        "That must be fun for the kids.",
    ],
)
def test_must_that_infers_or_names_is_no_obligation(text: str) -> None:
    assert not commits(text)


@pytest.mark.parametrize(
    "text",
    [
        "I must renew my passport before the flight.",
        "The crown must be cemented before we fly.",
        "All authors must have complete OpenReview profiles.",
        "Your passport must be valid for at least six months after entry.",
        "Must renew passport before Friday.",
    ],
)
def test_must_that_obliges_stays_a_commitment(text: str) -> None:
    assert commits(text)


@pytest.mark.parametrize(
    "text",
    [
        "Turtles always remind me to slow down and appreciate the small things in life.",
        "Moments like these remind us of the beauty of life, even during tough times.",
        "Thanks. It's good to be reminded to appreciate the small things.",
        "It got me thinking and reminded me how important relationships are in this biz.",
    ],
)
def test_what_reminds_someone_asks_for_no_reminder(text: str) -> None:
    assert not commits(text)


@pytest.mark.parametrize(
    "text",
    ["Remind me to call the dentist.", "Remind the team about the demo.", "Reminder: rent"],
)
def test_a_reminder_asked_for_stays_a_commitment(text: str) -> None:
    assert commits(text)


def test_what_a_thing_will_do_is_no_to_do() -> None:
    text = "Cool! I hope the new devices will improve your skill and you will play even better!"
    assert actions(text) == []


def phrases(text: str) -> set[str]:
    (analysis,) = PhraseParser().analyse([("", text, frozenset({"dave"}))])
    return {phrase.text for phrase in analysis.phrases}


def test_the_verb_after_a_subject_of_two_nouns_names_nothing() -> None:
    found = phrases("No problem, Dave. Your enthusiasm and hard work show in everything you do.")
    assert not found & {"show", "work show", "hard work show"}


@pytest.mark.parametrize(
    ("text", "noun"),
    [("Coffee and cake at 3.", "cake"), ("Your flights and a show in Boston.", "show")],
)
def test_a_heading_of_two_things_keeps_its_nouns(text: str, noun: str) -> None:
    assert noun in phrases(text)


@pytest.mark.parametrize(
    "text",
    [
        "My goal is to give kids a loving home.",
        "This is a big move towards my goal of having a family.",
        "I hope to build my own family and put a roof over kids who haven't had that before.",
    ],
)
def test_a_goal_the_writer_states_is_a_commitment(text: str) -> None:
    assert commits(text)


@pytest.mark.parametrize(
    "text",
    [
        "Thanks! It feels good to use my skills to make a difference.",
        "It's great to be part of this organization and work with such passionate people.",
    ],
)
def test_how_a_doing_feels_is_no_to_do(text: str) -> None:
    assert actions(text) == []


def test_a_doing_said_to_be_necessary_stays_a_to_do() -> None:
    assert actions("It's important to renew the passport before the trip.") == [
        "renew the passport before the trip"
    ]
