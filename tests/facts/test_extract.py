"""The deterministic extractor's rules."""

from __future__ import annotations

from topologies.facts.extract import extract_items, split_sentences, topic_of


def test_identity_items() -> None:
    items = extract_items(
        "I moved to Lisbon in March. I work at Frachtwerk GmbH. I'm vegetarian now. "
        "I have two kids."
    )
    keys = {(i.key, i.value) for i in items}
    assert ("identity:home_city", "lisbon in march") in keys or any(
        k == "identity:home_city" and v.startswith("lisbon") for k, v in keys
    )
    assert any(k == "identity:employer" and v.startswith("frachtwerk") for k, v in keys)
    assert ("identity:diet", "vegetarian") in keys
    assert ("identity:family", "two kids") in keys
    assert all(i.kind == "identity" for i in items)


def test_stances_share_a_topic_key() -> None:
    a = extract_items("I love group fitness classes.")[0]
    b = extract_items("Lately I prefer working out alone.")[0]
    c = extract_items("I hate Zumba now.")[0]
    assert a.key == b.key == c.key == "stance:fitness"
    assert c.polarity == -1 and c.revision
    assert not a.revision


def test_possessive_attribute_and_atomic_fact() -> None:
    items = extract_items(
        "My favourite editor is Helix. The CI pipeline failed twice on the "
        "staging cluster yesterday. Thanks!"
    )
    assert items[0].key == "attr:favourite_editor" and items[0].value == "helix"
    assert items[1].kind == "fact" and items[1].key is None
    assert len(items) == 2  # the greeting yields nothing


def test_questions_and_short_lines_yield_nothing() -> None:
    assert extract_items("Can you send the deck? ok. See you") == []


def test_split_and_topic() -> None:
    assert split_sentences("One. Two!\nThree? - four") == ["One.", "Two!", "Three?", "four"]
    assert topic_of("an espresso after lunch") in {"drinks", "food"}
    assert topic_of("the quarterly numbers") == "numbers"
