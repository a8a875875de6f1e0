"""Parser cases built from real answers of the released run1 data (docs/protocol/reference-data.md#layout, data/README.md).

The moves of the contracting, mediation, repetition and reputation (higher-order) folders carry
the raw LLM text of the final, accepted answer in ``response``. Our strict parser must accept
each of them and give positive probability to the recorded action (to the delegate token for
moves played by the mediator). A small trimmed copy of varied answers lives in
``fixtures/run1_responses.json`` and the 203 sampled moves in
``tests/data/run1_responses_sample.json.gz``, so all but the full-run checks run without the
full reference folder.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from coopeval.decisions import ActionDistribution, AnswerError, ContractDesign, parse_answer
from tests.shared_data import RESPONSES_SAMPLE

HERE = Path(__file__).resolve().parent

# Enum members in declaration order, as the released records name them: the position is the
# token index (docs/protocol/reference-data.md#layout). Note the Traveller's Dilemma members are CLAIM_0..CLAIM_3 (indices),
# not the claim values 2..5.
ENUMS: dict[str, tuple[str, ...]] = {
    "PrisonersDilemmaAction": ("COOPERATE", "DEFECT"),
    "PublicGoodsAction": ("CONTRIBUTE", "FREE_RIDE"),
    "TravellersDilemmaAction": ("CLAIM_0", "CLAIM_1", "CLAIM_2", "CLAIM_3"),
    "TrustGameAction": ("GIVE", "KEEP"),
    "StagHuntAction": ("STAG", "HARE"),
    "MatchingPenniesAction": ("HEADS", "TAILS"),
}
GAME_ENUM = {
    "prisoners_dilemma": "PrisonersDilemmaAction",
    "public_goods": "PublicGoodsAction",
    "travellers_dilemma": "TravellersDilemmaAction",
    "trust_game": "TrustGameAction",
    "stag_hunt": "StagHuntAction",
    "matching_pennies": "MatchingPenniesAction",
}
SAMPLE_FOLDERS = (
    "mediation_prisoners_dilemma",
    "mediation_travellers_dilemma",
    "contracting_public_goods",  # gzip
    "contracting_trust_game",
    "repetition_stag_hunt",  # gzip
    "reputation_matching_pennies",
    "reputation_travellers_dilemma",
)
PER_FOLDER = 29  # 7 × 29 = 203 sampled answers


@dataclass(frozen=True)
class Move:
    folder: str
    position: str  # "<line>:<index>" within records.jsonl
    player: str
    action: str
    mediated: bool
    response: str

    @property
    def n_tokens(self) -> int:
        n = len(ENUMS[self.action.split(".", 1)[0]])
        return n + 1 if self.folder.startswith("mediation_") else n


def token_of(action: str, mediated: bool, n_tokens: int) -> str:
    """The token whose probability must be positive for the recorded move."""
    if mediated:
        return f"A{n_tokens - 1}"  # the delegate token, last under Mediation
    enum, member = action.split(".", 1)
    return f"A{ENUMS[enum].index(member)}"


def _moves(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if "player" in value and "action" in value:
            yield value
        else:
            for item in value.get("moves", []):
                yield from _moves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _moves(item)


def read_moves(run1: Path, folder: str) -> list[Move]:
    """Every move with a recorded ``response`` in one experiment's records."""
    base = run1 / folder
    path = base / "records.jsonl" if (base / "records.jsonl").exists() else base / "records.jsonl.gz"
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for line_no, line in enumerate(handle):
            for i, move in enumerate(_moves(json.loads(line))):
                if "response" in move:
                    out.append(Move(folder, f"{line_no}:{i}", move["player"], move["action"],
                                    bool(move.get("mediated")), move["response"]))
    return out


def folders_with_responses(run1: Path) -> list[str]:
    """Folders whose moves carry ``response`` and whose records were copied (3 are missing)."""
    return sorted(
        p.name
        for p in run1.iterdir()
        if p.is_dir()
        and not p.name.startswith(("no_mechanism", "reputation_first_order"))
        and any((p / name).exists() for name in ("records.jsonl", "records.jsonl.gz"))
    )


def sample_moves(run1: Path) -> list[Move]:
    """A deterministic sample: per folder, the PER_FOLDER moves with the smallest position hash."""
    sample = []
    for folder in SAMPLE_FOLDERS:
        moves = read_moves(run1, folder)
        moves.sort(key=lambda m: hashlib.sha256(f"{m.folder}:{m.position}".encode()).hexdigest())
        sample.extend(moves[:PER_FOLDER])
    return sample


def check_consistent(move_action: str, mediated: bool, n_tokens: int, text: str) -> dict[str, int]:
    fmt = ActionDistribution(tuple(f"A{i}" for i in range(n_tokens)))
    dist = parse_answer(fmt, text)
    token = token_of(move_action, mediated, n_tokens)
    assert dist[token] > 0, f"recorded {move_action} (mediated={mediated}) but parsed {dist}"
    return dist


# ---------------------------------------------------------------- fixture (no reference folder needed)

FIXTURE = json.loads((HERE / "fixtures" / "run1_responses.json").read_text(encoding="utf-8"))["responses"]


def test_fixture_is_varied() -> None:
    assert 10 <= len(FIXTURE) <= 20
    assert {r["folder"].split("_")[0] for r in FIXTURE} == {"contracting", "mediation", "repetition", "reputation"}
    assert {r["n_tokens"] for r in FIXTURE} == {2, 3, 4, 5}
    assert any(r["mediated"] for r in FIXTURE)
    assert any("multi_differ" in r["features"] for r in FIXTURE)


@pytest.mark.parametrize("case", FIXTURE, ids=[f"{r['folder']}-{i}" for i, r in enumerate(FIXTURE)])
def test_fixture_response(case: dict[str, Any]) -> None:
    dist = check_consistent(case["action"], case["mediated"], case["n_tokens"], case["response"])
    assert dist == case["expected"]


# ---------------------------------------------------------------- sampled moves (tests/data)

def stored_sample() -> list[Move]:
    """The sampled moves stored in ``tests/data`` (empty while ``make_sample.py`` builds them)."""
    if not RESPONSES_SAMPLE.is_file():
        return []
    with gzip.open(RESPONSES_SAMPLE, "rt", encoding="utf-8") as handle:
        return [Move(**m) for m in json.load(handle)]


SAMPLE = stored_sample()
SAMPLE_IDS = [f"{m.folder}@{m.position}" for m in SAMPLE]


def test_sample_size() -> None:
    assert len(SAMPLE) == PER_FOLDER * len(SAMPLE_FOLDERS)
    assert len({(m.folder, m.position) for m in SAMPLE}) == len(SAMPLE)
    assert {m.folder for m in SAMPLE} == set(SAMPLE_FOLDERS)


def test_stored_sample_is_the_sample_of_the_full_data(full_run1_dir: Path) -> None:
    """Full-run check: ``tests/data/run1_responses_sample.json.gz`` is exactly what
    :func:`sample_moves` draws from the full run1 folder."""
    assert sample_moves(full_run1_dir) == SAMPLE


@pytest.mark.parametrize("move", SAMPLE, ids=SAMPLE_IDS)
def test_sampled_real_response(move: Move) -> None:
    check_consistent(move.action, move.mediated, move.n_tokens, move.response)


# ---------------------------------------------------------------- full reference folder


def test_every_real_response_parses(full_run1_dir: Path) -> None:
    """Full-run check: all 6,426 run1 answers with a recorded response: strict parse, consistent
    with the move."""
    failures: list[str] = []
    total = 0
    for folder in folders_with_responses(full_run1_dir):
        for move in read_moves(full_run1_dir, folder):
            total += 1
            try:
                check_consistent(move.action, move.mediated, move.n_tokens, move.response)
            except (AnswerError, AssertionError) as exc:
                failures.append(f"{folder}@{move.position} {move.player}: {exc}")
    assert total == 6426
    assert not failures, f"{len(failures)} of {total} rejected or inconsistent:\n" + "\n".join(failures[:20])


def test_fixture_comes_from_the_data(full_run1_dir: Path) -> None:
    """Full-run check: every trimmed fixture answer is the tail of a recorded response."""
    for case in FIXTURE:
        tail = case["response"].split("\n[...]\n")[-1]
        matches = [m for m in read_moves(full_run1_dir, case["folder"])
                   if m.player == case["player"] and m.action == case["action"] and m.response.endswith(tail)]
        assert matches, f"fixture answer of {case['player']} in {case['folder']} not found in the data"


# ---------------------------------------------------------------- contract designs (compat flag)

LENIENT_ONLY = {
    ("contracting_public_goods", "openai/gpt-4o-2024-05-13(CoT)#P2"),
    ("contracting_public_goods", "openai/gpt-4o-2024-05-13(CoT)#P3"),
}


def test_real_contract_designs(run1_dir: Path) -> None:
    """Strict integers reject exactly the two gpt-4o designs with ``-0.5``; lenient mode (the
    reference's truncation, ``compat.lenient_contract_ints``) reproduces all 78 recorded contracts."""
    strict_rejected: set[tuple[str, str]] = set()
    n = 0
    for path in sorted(run1_dir.glob("contracting_*/contract_design.json")):
        folder = path.parent.name
        enum = GAME_ENUM[folder.removeprefix("contracting_")]
        for designer, entry in json.loads(path.read_text(encoding="utf-8")).items():
            n += 1
            recorded = {f"A{ENUMS[enum].index(k.split('.', 1)[1])}": v for k, v in entry["contract"].items()}
            fmt = ContractDesign(tuple(f"A{i}" for i in range(len(ENUMS[enum]))))
            assert parse_answer(fmt, entry["response"], lenient=True) == recorded
            try:
                assert parse_answer(fmt, entry["response"]) == recorded
            except AnswerError as exc:
                assert str(exc).endswith('"A1" is -0.5 (a decimal number)')
                strict_rejected.add((folder, designer))
    assert n == 78
    assert strict_rejected == LENIENT_ONLY
