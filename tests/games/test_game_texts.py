"""The games' payoff descriptions come from templates (``games/prompts``, issue 20): every
template is rendered by some shipped game, the texts are unchanged by the move (strings taken
from main at 0a09e99, where they were f-strings), and a reworded template changes the game
fingerprint (so the cell ids) of exactly the games that state it."""

from __future__ import annotations

import pytest

from coopeval.core.prompts import PromptLibrary
from coopeval.games.definitions import GAME_TEXTS, public_goods, travellers_dilemma
from coopeval.studies.coopeval.cells import game_fingerprint

SHIPPED = {
    "prisoners_dilemma": {}, "public_goods": {}, "travellers_dilemma": {}, "trust_game": {}, "stag_hunt": {},
    "matching_pennies": {},
}


def test_every_game_template_is_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: set[str] = set()
    original = PromptLibrary.render

    def recording(self: PromptLibrary, name: str, /, **values: object) -> str:
        if self.directory.resolve() == GAME_TEXTS.directory.resolve():
            rendered.add(name)
        return original(self, name, **values)

    monkeypatch.setattr(PromptLibrary, "render", recording)
    for key, params in SHIPPED.items():
        game_fingerprint(key, params)
    public_goods(endowment=2.0)
    public_goods(players=2)  # "one other player", "both players"
    assert rendered == set(PromptLibrary(GAME_TEXTS.directory).templates)


def test_texts_are_unchanged() -> None:
    assert public_goods(endowment=2.0).seat_rules[0] == (
        "There are two other players. Each player holds an endowment of 2 points. A0 (Contribute) puts your endowment into "
        "a common pot; A1 (Free-ride) keeps it. The pot is multiplied by 1.5 and shared equally among all three players. If "
        "k players contribute (k counts you too), each contributor gets 3·k/3 points and each free-rider gets 2 + 3·k/3 "
        "points."
    )
    assert travellers_dilemma(penalty=False).seat_rules[1].split("\n")[:2] == [
        "Each player claims an amount. If both claims are equal, both get the claim. Otherwise, with m the lower claim, the "
        "lower claimant gets m + 2 and the higher claimant gets m + 0.",
        "- You A0, other player A0: you get 2 points, they get 2.",
    ]


@pytest.mark.parametrize(
    ("template", "users"),
    [
        ("outcome_line", {"prisoners_dilemma", "travellers_dilemma", "trust_game", "stag_hunt", "matching_pennies"}),
        ("travellers_rules", {"travellers_dilemma"}),
        ("public_goods_rules", {"public_goods"}),
        ("point_one", {"public_goods"}),  # the default endowment is 1 point
        ("point_many", set()),
        ("public_goods_others_many", {"public_goods"}),
        ("public_goods_among_many", {"public_goods"}),
        ("public_goods_others_one", set()),  # N = 2 only
        ("public_goods_among_two", set()),
    ],
)
def test_a_reworded_template_changes_the_fingerprints_of_its_games(
    template: str, users: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {key: game_fingerprint(key, params) for key, params in SHIPPED.items()}
    library = PromptLibrary(GAME_TEXTS.directory)
    library.templates = {**library.templates, template: library.templates[template] + " (reworded)"}
    monkeypatch.setattr(GAME_TEXTS, "_library", library)
    after = {key: game_fingerprint(key, params) for key, params in SHIPPED.items()}
    assert {key for key in SHIPPED if before[key] != after[key]} == users
