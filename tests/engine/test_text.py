"""Text analysis: keywords, labels, categories, entities, dates and deadlines, causal cues."""

from __future__ import annotations

from datetime import UTC, datetime

from topologies.text import (
    categorize,
    extract_entities,
    find_dates,
    has_causal_cue,
    keywords,
    label_from_texts,
)

# Monday 2 November 2026, 09:00 UTC
MONDAY = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def test_keywords_prefer_rare_content_words_over_common_ones() -> None:
    words = keywords("Please book the dentist because the molar hurts again", k=3)
    assert words[:2] == ["molar", "dentist"] or set(words[:2]) == {"molar", "dentist"}
    assert "the" not in words and "please" not in words


def test_label_is_drawn_from_words_the_texts_share() -> None:
    texts = [
        "Bathroom ceiling leak\nWater is dripping through the bathroom ceiling again.",
        "Ceiling leak update\nThe plumber found the leak in the bathroom above.",
        "Bathroom ceiling\nLandlord says the ceiling leak will be fixed next week.",
    ]
    label = label_from_texts(texts)
    assert 1 <= len(label.split()) <= 4
    assert label == label.title()
    assert {"ceiling", "leak"} <= set(label.lower().split()) or "Bathroom Ceiling" in label


def test_label_of_a_single_text_uses_its_salient_words() -> None:
    assert label_from_texts(["Passport renewal at the Bürgeramt"]) != "Untitled"
    assert label_from_texts([""]) == "Untitled"


def test_categories_come_from_a_small_lexicon() -> None:
    assert categorize("Dentist appointment for the crown on my molar") == "health"
    assert categorize("Flight to Bangkok, passport must be valid") == "travel"
    assert categorize("Release review deck for the launch") == "work"
    assert categorize("Plumber coming for the bathroom ceiling leak") == "home"
    assert categorize("Leonie's birthday party gift") == "family_social"
    assert categorize("zzz qqq") == "general"


def test_entities_cover_tickets_emails_mentions_names_and_participants() -> None:
    text = (
        "FLX-142 is blocked. @ruben please ping Farida Osei about it, "
        "or mail ming.zhao@wattwerk.de. The demo at Havelstrom moved."
    )
    found = extract_entities(text, ["Kasia Nowak <kasia@wattwerk.de>"], thread="thr-7")
    assert "ticket:flx-142" in found
    assert "mention:ruben" in found
    assert "name:farida osei" in found and "name:farida" in found
    assert "email:ming.zhao@wattwerk.de" in found
    assert "name:havelstrom" in found
    assert {"person:kasia nowak", "email:kasia@wattwerk.de", "thread:thr-7"} <= set(found)
    assert not any(e.endswith(":the") or e.endswith(":please") for e in found)


def test_a_code_after_a_number_is_its_unit_not_a_name() -> None:
    text = (
        "Own share 384.20 EUR, photo 14 EUR. Sync at 10:00 CEST, 40 GB left. "
        "Ask Farida about the EUR rate before flight QR 78 and the Q4 OKR workshop."
    )
    found = extract_entities(text)
    assert not any(e.endswith((":cest", ":gb")) for e in found)
    assert {"name:eur", "name:farida", "name:qr", "name:q4 okr"} <= set(found)
    assert extract_entities("A voucher worth 500 EUR.") == []


def test_the_owner_is_not_an_entity() -> None:
    found = extract_entities("Alice and Farida met", ["Alice Keller <alice@x.de>"], owner="alice")
    assert not any("alice" in e for e in found)
    assert "name:farida" in found


def test_explicit_dates_resolve_against_the_event_year() -> None:
    text = "Review on 14 Nov, launch Dec 1, freeze 2026-11-19, party 18 December."
    days = [m.when.date().isoformat() for m in find_dates(text, MONDAY)]
    assert days == ["2026-11-14", "2026-12-01", "2026-11-19", "2026-12-18"]


def test_a_date_early_next_year_rolls_over() -> None:
    (mention,) = find_dates("Passport expires 11 Mar", MONDAY)
    assert mention.when.date().isoformat() == "2027-03-11"
    assert mention.deadline


def test_deadline_cues_and_clock_times() -> None:
    found = find_dates(
        "Please send the deck by Wednesday 18 Nov, 12:00. Review Thu 19 Nov.", MONDAY
    )
    assert [(m.when.isoformat(), m.deadline) for m in found] == [
        ("2026-11-18T12:00:00+00:00", True),
        ("2026-11-19T00:00:00+00:00", False),
    ]
    assert found[0].has_time


def test_relative_dates_count_from_the_event_time() -> None:
    assert [m.when.date().isoformat() for m in find_dates("Pay me by Friday", MONDAY)] == [
        "2026-11-06"
    ]
    assert find_dates("Pay me by Friday", MONDAY)[0].deadline
    assert find_dates("call tomorrow", MONDAY)[0].when.date().isoformat() == "2026-11-03"
    assert find_dates("plan it next week", MONDAY)[0].when.date().isoformat() == "2026-11-09"
    same_day = find_dates("see you Monday", MONDAY)[0]
    assert same_day.when.date().isoformat() == "2026-11-09"  # the next Monday, not today


def test_no_dates_in_plain_text() -> None:
    assert find_dates("6 x 800 m averaged 4:38/km, sun was out", MONDAY) == []


def test_causal_cues() -> None:
    assert has_causal_cue("The demo moved because the staging deploy failed")
    assert has_causal_cue("After the rc1 deploy failed we rolled back")
    assert has_causal_cue("Delayed due to the feed outage")
    assert not has_causal_cue("Demo on Wednesday with Havelstrom")


def _periods(text: str) -> list[tuple[str, str, str]]:
    return [
        (m.phrase, m.when.date().isoformat(), m.until.date().isoformat() if m.until else "")
        for m in find_dates(text, MONDAY, past=True)
    ]


def test_questions_about_the_past_name_periods() -> None:
    assert _periods("what did I do last week?") == [("last week", "2026-10-26", "2026-11-02")]
    assert _periods("who called yesterday") == [("yesterday", "2026-11-01", "2026-11-02")]
    assert _periods("the parcel 3 days ago") == [("3 days ago", "2026-10-30", "2026-10-31")]
    assert _periods("plans this month") == [("this month", "2026-11-01", "2026-11-03")]
    assert _periods("Where did Joanna travel in July 2022?") == [
        ("July 2022", "2022-07-01", "2022-08-01")
    ]
    assert _periods("in the last week of August 2023") == [
        ("the last week of August 2023", "2023-08-25", "2023-09-01")
    ]
    assert _periods("what happened in 2022") == [("2022", "2022-01-01", "2023-01-01")]


def test_past_dates_resolve_backwards_and_keep_their_day() -> None:
    # a date without a year is the latest one up to now; a weekday the one before today
    assert _periods("the dinner on 14 Dec") == [("14 Dec", "2025-12-14", "2025-12-15")]
    assert _periods("the call on Friday") == [("Friday", "2026-10-30", "2026-10-31")]
    assert _periods("on 1 February, 2023") == [("1 February, 2023", "2023-02-01", "2023-02-02")]
    # a month alone needs a preposition: "may" is a verb too
    assert _periods("May I ask what we did in June?") == [("June", "2026-06-01", "2026-07-01")]
    # the future-facing reading of the same text is unchanged
    assert find_dates("the call on Friday", MONDAY)[0].when.date().isoformat() == "2026-11-06"


def _days(text: str) -> list[str]:
    return [m.when.date().isoformat() for m in find_dates(text, MONDAY)]


def test_a_date_after_a_word_of_the_past_is_its_latest_day_never_one_ahead() -> None:
    """'since', 'last', 'back on', 'ago' or a past-tense verb before a date without a year
    say it has passed: it is its latest day up to the event (dropped when that is long ago),
    never the coming one, so never a due day."""
    assert _days("No coffee since 20 Nov") == []  # 20 Nov 2025: long past
    assert _days("Things changed since March 14") == []
    assert _days("Back on Nov 20 we still had the old car") == []
    assert _days("We met on 20 Nov, a year ago") == []
    assert _days("We met on 20 Oct") == ["2026-10-20"]
    assert _days("We met on 20 Nov") == []
    assert _days("Last Friday was long") == ["2026-10-30"]
    assert _days("We met on Friday") == ["2026-10-30"]
    assert _days("On Friday, I got great news") == ["2026-10-30"]
    assert _days("On 20 Nov I got a slot") == []


def test_words_that_only_look_like_the_past_keep_the_date_ahead() -> None:
    """'be back on', an out-of-office 'back on', 'since' meaning 'because', 'the last Friday
    of the month', an 'ago' that dates another verb, and a decision's day look ahead."""
    assert _days("I'll be back on Friday") == ["2026-11-06"]
    assert _days("Out of office, back on 9 Nov") == ["2026-11-09"]
    assert _days("Since 6 Nov is the deadline, send it Thursday") == ["2026-11-06", "2026-11-05"]
    assert _days("Since Friday is a holiday, submit on Thursday") == ["2026-11-06", "2026-11-05"]
    assert _days("The deadline is the last Friday of the month") == ["2026-11-06"]
    assert _days("Demo on Friday, agreed a week ago") == ["2026-11-06"]
    assert _days("Kickoff on 5 Nov, planned two weeks ago") == ["2026-11-05"]
    assert _days("We decided on Friday for the launch") == ["2026-11-06"]


def test_a_date_after_a_plan_word_stays_the_coming_one() -> None:
    assert _days("Booked for 20 Nov") == ["2026-11-20"]
    assert _days("The review was moved to 20 Nov") == ["2026-11-20"]
    assert _days("Got a slot on 20 Nov for the passport") == ["2026-11-20"]
    assert _days("I got a slot on 20 Nov") == ["2026-11-20"]
    assert _days("On Friday we will meet") == ["2026-11-06"]
    assert _days("The party is on 20 Nov") == ["2026-11-20"]
    assert _days("Pay me by Friday, as agreed last week") == ["2026-11-06"]
    assert _days("The post office lady said Thursday") == ["2026-11-05"]


def test_a_possessive_weekday_in_the_past_tense_is_the_last_such_day() -> None:
    """'Friday's demo went well' speaks of the Friday that passed; on a Monday, 'Monday's
    demo went well' of that same day."""
    assert _days("Friday's demo went well") == ["2026-10-30"]
    assert _days("Thursday’s session felt good") == ["2026-10-29"]
    assert _days("Monday's demo went well") == ["2026-11-02"]
    assert _days("Friday's demo: slides") == ["2026-11-06"]  # no verb: the next one


def test_a_possessive_weekday_in_a_present_or_future_clause_is_the_next_one() -> None:
    assert _days("See you at Friday's review") == ["2026-11-06"]
    assert _days("Friday's review is at 10:00") == ["2026-11-06"]
    assert _days("Friday's standup moved to Thursday") == ["2026-11-06", "2026-11-05"]


def test_a_text_read_again_at_an_equal_time_in_another_zone_resolves_in_that_zone() -> None:
    """The same text at the same instant, written in Berlin: its dates are Berlin's days and
    clock times, whatever was read for UTC before (the dates are kept per time zone)."""
    from zoneinfo import ZoneInfo

    text = "Please send the deck by Wednesday 18 Nov, 12:00."
    in_utc = find_dates(text, MONDAY)
    in_berlin = find_dates(text, MONDAY.astimezone(ZoneInfo("Europe/Berlin")))
    assert in_utc[0].when.isoformat() == "2026-11-18T12:00:00+00:00"
    assert in_berlin[0].when.isoformat() == "2026-11-18T12:00:00+01:00"


def test_a_caller_changing_the_dates_or_entities_it_got_changes_no_later_reading() -> None:
    text = "Ping @dana about FLX-142 by Friday"
    find_dates(text, MONDAY).clear()
    extract_entities(text, ["Dana Weiss <dana@example.com>"]).clear()
    assert [m.when.date().isoformat() for m in find_dates(text, MONDAY)] == ["2026-11-06"]
    assert "ticket:flx-142" in extract_entities(text, ["Dana Weiss <dana@example.com>"])


def test_a_limit_reads_the_first_dates_whatever_was_read_before() -> None:
    """Readers ask for different numbers of dates from the same text (the planner 4, an
    intent's goal 8): each gets the first ones, in order, whichever asked first."""
    text = "Dry run 9 Nov, review 10 Nov, demo 12 Nov, freeze 16 Nov, launch 20 Nov, party 27 Nov."
    days = ["2026-11-09", "2026-11-10", "2026-11-12", "2026-11-16", "2026-11-20", "2026-11-27"]
    assert [m.when.date().isoformat() for m in find_dates(text, MONDAY, limit=2)] == days[:2]
    assert [m.when.date().isoformat() for m in find_dates(text, MONDAY, limit=8)] == days
    assert [m.when.date().isoformat() for m in find_dates(text, MONDAY)] == days[:4]
    assert len(find_dates(text, MONDAY, limit=12)) == 6
