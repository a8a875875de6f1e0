"""What a person types at ``--tty`` is read in the terminal's encoding or refused (issue 46, R46):
UTF-8 typed into a Latin-1 or ASCII terminal is never stored as mojibake (``TrÃ¨s``) or
replacement characters (``Tr��s``); the person is told how to fix the locale and asked again."""

from __future__ import annotations

import io

import pytest

from coopeval.humanplay.service import SeatDesk
from coopeval.humanplay.tty import TerminalSeat


def _seat(tmp_path, typed: bytes, encoding: str) -> tuple[TerminalSeat, io.StringIO]:
    stdin = io.TextIOWrapper(io.BytesIO(typed), encoding=encoding)
    stdout = io.StringIO()
    return TerminalSeat(SeatDesk(tmp_path), stdin, stdout), stdout


@pytest.mark.parametrize(
    ("encoding", "refusal"),
    [
        ("latin-1", "What was typed is UTF-8, but this terminal's encoding is iso8859-1: it would be stored wrongly; "),
        ("ascii", "This terminal's encoding (ascii) cannot read what was typed; "),
    ],
)
def test_utf8_typed_into_another_encoding_is_refused_and_asked_again(tmp_path, encoding: str, refusal: str) -> None:
    seat, stdout = _seat(tmp_path, "Très bien\n".encode() + b"Tres bien\n", encoding)
    assert seat.ask("note> ") == "Tres bien"  # the first line refused, the second read
    shown = stdout.getvalue()
    assert refusal + "set a UTF-8 locale and run play-human again (e.g. export LANG=C.UTF-8 LC_ALL=C.UTF-8" in shown
    assert "nothing was stored, type the field again" in shown
    if encoding == "latin-1":  # the terminal's own bytes are read as typed
        seat, _ = _seat(tmp_path, "Très bien\n".encode("latin-1"), "latin-1")
        assert seat.ask("note> ") == "Très bien"

