"""The boundary probe's counting: centroid bands, the consistent-nearest merge, themes."""

from __future__ import annotations

from benchmarks.boundary_probe import band_counts, consistent_target, majority


def test_pairs_are_counted_per_band_of_005_from_the_floor_up() -> None:
    pairs = [(0.20, True), (0.26, True), (0.29, False), (0.35, False), (0.52, True)]
    assert band_counts(pairs, floor=0.25) == {
        "0.25": (1, 1),
        "0.35": (0, 1),
        "0.50": (1, 0),
    }


def test_a_cosine_on_a_band_edge_falls_in_the_band_it_opens() -> None:
    assert band_counts([(0.35, True), (0.7, False)], floor=0.3) == {
        "0.35": (1, 0),
        "0.70": (0, 1),
    }


def test_members_agreeing_on_one_nearest_concept_above_the_floor_name_it() -> None:
    assert consistent_target([("c2", 0.31), ("c2", 0.27)], floor=0.25) == "c2"


def test_members_that_disagree_or_fall_short_name_no_concept() -> None:
    assert consistent_target([("c2", 0.31), ("c3", 0.40)], floor=0.25) is None
    assert consistent_target([("c2", 0.31), ("c2", 0.20)], floor=0.25) is None
    assert consistent_target([], floor=0.25) is None


def test_the_theme_most_events_hold_wins_and_a_tie_goes_to_the_first_by_name() -> None:
    theme_of = {"e1": "water", "e2": "water", "e3": "launch", "e4": "race"}
    assert majority(["e1", "e2", "e3"], theme_of) == "water"
    assert majority(["e3", "e4"], theme_of) == "launch"
    assert majority(["e9"], theme_of) == "-"
    assert majority([], theme_of) == "-"
