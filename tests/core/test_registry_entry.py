"""The registry lookup shared by games, mechanisms and studies names the known entries."""

from __future__ import annotations

import pytest

from coopeval.core.errors import registry_entry
from coopeval.games import get_game
from coopeval.pipeline.studies import get_study


def test_entry_of_a_known_name() -> None:
    assert registry_entry({"a": 1, "b": 2}, "b", "thing", "things") == 2


def test_unknown_name_lists_the_keys_in_order() -> None:
    with pytest.raises(KeyError, match=r"unknown thing 'c'; known things: a, b\"$"):
        registry_entry({"a": 1, "b": 2}, "c", "thing", "things")


def test_unknown_name_lists_the_given_known_names() -> None:
    with pytest.raises(KeyError, match=r"unknown thing 'c'; known things: b, a"):
        registry_entry({"a": 1, "b": 2}, "c", "thing", "things", known=["b", "a"])


def test_registries_use_it() -> None:
    with pytest.raises(KeyError, match=r"unknown study 'nope'; known studies: coopeval, gossip, evolution"):
        get_study("nope")
    with pytest.raises(KeyError, match=r"unknown game 'nope'; known games: prisoners_dilemma, "):
        get_game("nope")
    assert get_game("PrisonersDilemma").key == "prisoners_dilemma"
