"""Write built tables as CSV (unrounded), Markdown and LaTeX (rounded as the paper prints them).

Rounding (docs/protocol/tables.md): Mean and Fitness 3 decimals, DR ranks 1 decimal, NS/WD percentages 1
decimal. Rank tie groups (docs/comparisons.md), when the tables have them, follow a value as
superscript letters. Emphasis: bold for rank ≤ 2, grey for rank ≥ n − 1 with n ≥ 5 (LaTeX
``\\textcolor{gray}``, which needs ``xcolor``; Markdown shows grey cells in italics). Every file
is written to a temporary name and moved into place, so no partial file remains.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.games import GAME_TITLES, GAME_TYPES, get_game
from coopeval.studies.coopeval.mechanisms import catalog
from coopeval.studies.coopeval.mechanisms.catalog import MECHANISM_INFO
from coopeval.studies.coopeval.tables.frames import (
    AGGREGATE_COLUMNS,
    DESIGN_COLUMNS,
    PER_GAME_COLUMNS,
    AgentColumns,
    TableSet,
)
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE
from coopeval.studies.coopeval.tables.tie_groups import NOT_TESTABLE
from coopeval.studies.coopeval.tables.undefined import REASONS, note_kind

__all__ = ["TABLE_FILES", "atomic_write_text", "format_cell", "game_section", "render_latex", "render_markdown", "write_tables"]

PAPER_TABLES = ("per_game", "aggregate", "design_quality")
"""The paper's tables (docs/protocol/tables.md), each written as CSV, Markdown and LaTeX."""
TABLE_FILES = tuple(f"{name}.{ext}" for name in PAPER_TABLES for ext in ("csv", "md", "tex"))

AGGREGATE_TITLE = "Four social dilemmas"
"""Section title of the aggregate tables (the games of :data:`coopeval.games.SOCIAL_DILEMMA_TYPES`)."""


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder and ``os.replace``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"
    try:
        with tmp.open("x", encoding="utf-8", newline="") as handle:  # default mode, honours umask
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _decimals(metric: str) -> int:
    return 3 if metric in ("Mean", "Fitness") else 1


def format_cell(
    mean: float | None, se: float | None, metric: str, used: int | None = None, total: int | None = None, unit: str = "runs"
) -> str:
    """``"1.234 ± 0.056"`` (or ``"1.234"`` without s.e.), rounded per metric (docs/protocol/tables.md);
    ``"–"`` without a mean. When the mean used fewer values than the cell had (``used`` <
    ``total``) the count follows: ``"2.000 ± 1.000 (2/3 runs)"`` (issue 36 item 4)."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        text = "–"
    else:
        d = _decimals(metric)
        text = f"{mean:.{d}f}"
        if se is not None and not (isinstance(se, float) and math.isnan(se)):
            text += f" ± {se:.{d}f}"
    if used is not None and total is not None and used < total:
        text += f" ({used}/{total} {unit})"
    return text


FEWER_VALID_NOTE = (
    "(k/n runs) or (k/n games): the mean used k of the cell's n values; the others are undefined (NaN) and left out."
)
"""Caption note of a sub-table with a cell whose mean left out undefined values (``n_valid`` < ``n``; issue 25 kind 7, issue 36 item 4)."""


def _short(row: Mapping[str, object]) -> bool:
    n, n_valid = row.get("n"), row.get("n_valid")
    return isinstance(n, int) and isinstance(n_valid, int) and n_valid < n


def _any_short(sub: pl.DataFrame) -> bool:
    return any(_short(r) for r in sub.iter_rows(named=True)) if "n_valid" in sub.columns else False


def _cell_text(r: Mapping[str, Any], metric: str, kind: str) -> str:
    """One frame row's cell: :func:`format_cell` with its counts (runs per game, games in the aggregate)."""
    return format_cell(r["mean"], r["se"], metric, r.get("n_valid"), r.get("n"), "runs" if kind == "per_game" else "games")


def _agents(frame: pl.DataFrame, columns: AgentColumns) -> list[str]:
    present = [a for a in frame["agent"].unique().to_list() if a != LLM_AVERAGE]
    return columns.arrange(present) + ([LLM_AVERAGE] if LLM_AVERAGE in frame["agent"].to_list() else [])


def _mechanisms(frame: pl.DataFrame) -> list[str]:
    present = frame["mechanism"].unique().to_list()
    order = catalog.MECHANISM_ORDER  # read at call time: plugins may register mechanisms after import
    return [m for m in order if m in present] + sorted(set(present) - set(order))


def _games(frame: pl.DataFrame) -> list[str]:
    present = frame["game"].unique().to_list()
    return [g for g in GAME_TYPES if g in present] + sorted(set(present) - set(GAME_TYPES))


def _metrics(frame: pl.DataFrame) -> list[str]:
    order = ("Mean", "Fitness", "DR", "DR_exact", "NS", "WD")
    present = frame["metric"].unique().to_list()
    return [m for m in order if m in present] + sorted(set(present) - set(order))


def _default_players(game: str) -> int | None:
    """The registered game's own number of players (None for a game not registered)."""
    try:
        return get_game(game).n_players
    except KeyError:
        return None


def game_section(game: str, players: int | None, several: bool) -> str:
    """Section title of one game's per-game rows at ``players`` N: the game's title, followed by
    ``(N = n)`` when the table holds the game at ``several`` N or at an N other than its own
    (``Public Goods (N = 5)``); the paper's ``Public Goods`` otherwise."""
    title = GAME_TITLES.get(game, game)
    if players is None or (not several and players == _default_players(game)):
        return title
    return f"{title} (N = {players})"


def _subtables(frame: pl.DataFrame, kind: str) -> list[tuple[str, str, pl.DataFrame]]:
    """(section title, metric, rows) per sub-table; per-game tables get one section per game and
    number of players N (:func:`game_section`), in the frame's order of N within a game."""
    out = []
    if kind == "per_game":
        for game in _games(frame):
            rows = frame.filter(pl.col("game") == game)
            sizes = list(dict.fromkeys(rows["players"].to_list())) if "players" in rows.columns else [None]
            for players in sizes:
                at_n = rows.filter(pl.col("players").eq_missing(players)) if "players" in rows.columns else rows
                section = game_section(game, players, len(sizes) > 1)
                for metric in _metrics(at_n):
                    out.append((section, metric, at_n.filter(pl.col("metric") == metric)))
    else:
        for metric in _metrics(frame):
            out.append((AGGREGATE_TITLE, metric, frame.filter(pl.col("metric") == metric)))
    return out


def _undefined_note(sub: pl.DataFrame) -> str:
    """The caption sentence on the sub-table's blank rows (a ``note``: the metric is not defined
    for that mechanism, :mod:`coopeval.studies.coopeval.tables.undefined`), or ""."""
    if "note" not in sub.columns:
        return ""
    noted = sub.filter(pl.col("note").is_not_null()).select("mechanism", "note").unique(maintain_order=True)
    by_kind: dict[str, list[str]] = {}
    for mech, note in noted.iter_rows():
        labels = by_kind.setdefault(note_kind(note), [])
        if _mechanism_label(mech) not in labels:
            labels.append(_mechanism_label(mech))
    return "".join(
        f" –: not defined under {', '.join(labels)}: {REASONS.get(kind, kind)}; the CSV's note column has the message."
        for kind, labels in by_kind.items()
    )


def _caption(kind: str, metric: str, notes: dict[str, str], sub: pl.DataFrame) -> str:
    text = _caption_text(kind, metric, notes, sub) + _undefined_note(sub)
    return f"{text} {FEWER_VALID_NOTE}" if _any_short(sub) else text


def _caption_text(kind: str, metric: str, notes: dict[str, str], sub: pl.DataFrame) -> str:
    n_values = sorted({int(n) for n in sub["n"].drop_nulls().to_list()}) if "n" in sub.columns else []
    n_text = "/".join(str(n) for n in n_values) or "?"
    blank = "note" in sub.columns and sub["mean"].null_count() == sub.height
    emphasis = "Bold: rank ≤ 2; grey: rank ≥ n − 1 when n ≥ 5 types (ranks group values within 5 %)."
    if kind == "per_game":
        what = {
            "Mean": "Mean payoff (raw points, not normalised)",
            "Fitness": "Replicator-dynamics fitness (raw points); LLM Average is population-weighted",
            "DR": "Deviation-rating rank (1 = best): released ratings where the data has them, otherwise our ratings "
            f"under rule '{notes.get('dr_rule', 'strictest')}'",
            "DR_exact": "Deviation-rating rank (1 = best) of our strictest-CCE ratings",
        }.get(metric, metric)
        if blank:  # every row undefined: the caption's note says why (_undefined_note)
            return f"{what}."
        return f"{what}. Cells: mean over {n_text} run(s) ± standard error across runs (no ± with one run). {emphasis}"
    if kind == "aggregate":
        what = {
            "Mean": "Normalised Mean (0 = everyone at the NE, 1 = everyone cooperating), normalised per game after averaging over runs",
            "Fitness": "Normalised Fitness, normalised per game after averaging over runs; LLM Average population-weighted",
            "DR": "Deviation-rating rank (not normalised), released ratings where available",
            "DR_exact": "Deviation-rating rank (not normalised) of our strictest-CCE ratings",
        }.get(metric, metric)
        return (
            f"{what}. Cells: mean over {n_text} game(s) ± standard error ACROSS GAMES (not across runs). {emphasis}"
            + _group_sizes_text(notes)
        )
    what = {"NS": "Designs making the cooperative outcome a Nash equilibrium (NS), percent",
            "WD": "Designs making cooperation weakly dominant (WD), percent"}.get(metric, metric)
    return f"{what}. Cells: mean over {n_text} game(s) ± standard error across games. {emphasis}"


def _group_sizes_text(notes: dict[str, str]) -> str:
    """The aggregate caption's sentence on the further group sizes of the per-game table
    (``notes["group_sizes"]``, e.g. ``PublicGoods:5,8``), or ""."""
    if not notes.get("group_sizes"):
        return ""
    listed = "; ".join(
        f"{GAME_TITLES.get(game, game)} at N = {sizes.replace(',', ', ')}"
        for game, _, sizes in (item.partition(":") for item in notes["group_sizes"].split(";"))
    )
    return (f" The per-game table also holds {listed}; they do not enter this aggregate, which keeps the default"
            " cells (docs/protocol/tables.md#group-sizes).")


_NOT_TESTABLE_MARK = "n.t."


def _group_mark(group: str) -> str:
    return _NOT_TESTABLE_MARK if group.startswith(NOT_TESTABLE) else group


def _with_group_md(text: str, group: str | None) -> str:
    return text if not group else f"{text} <sup>{_group_mark(group)}</sup>"


def _with_group_tex(text: str, group: str | None) -> str:
    return text if not group else rf"{text}\textsuperscript{{{_group_mark(group)}}}"


def _tie_note(notes: dict[str, str], sub: pl.DataFrame, kind: str) -> str:
    """The caption sentence on tie groups, when the tables have them (not for a per-game sub-table
    without letters: the rows of a further group size N have none, as the comparisons cover the
    default cells)."""
    lettered = kind != "per_game" or "tie_group" not in sub.columns or sub["tie_group"].null_count() < sub.height
    if not notes.get("tie_groups") or not lettered:
        return ""
    untested = sorted({str(g) for g in sub["tie_group"].drop_nulls() if str(g).startswith(NOT_TESTABLE)}) if "tie_group" in sub.columns else []
    why = (f" {_NOT_TESTABLE_MARK}: {'; '.join(untested)}: at one replicate, or with too few clusters for the paired test"
           " to reach the 5 % level, the comparisons cannot tell the agents apart or put them in one group"
           " (docs/comparisons.md#what-a-row-can-claim).") if untested else ""
    return (" Letters: rank tie groups; two agents sharing a letter do not differ significantly (paired"
            f" comparison, {notes['tie_groups']}-corrected, 5 % level; docs/comparisons.md).{why}")


def _style_md(text: str, bold: bool, grey: bool) -> str:
    if bold:
        return f"**{text}**"
    if grey:
        return f"*{text}*"
    return text


def _mechanism_label(mech: str) -> str:
    return MECHANISM_INFO[mech].label if mech in MECHANISM_INFO else mech


def _mechanism_tex(mech: str) -> str:
    info = MECHANISM_INFO.get(mech)
    if info is not None and info.tex_label:
        return info.tex_label
    return _tex_escape(_mechanism_label(mech))


def render_markdown(frame: pl.DataFrame, kind: str, notes: dict[str, str] | None = None, columns: AgentColumns | None = None) -> str:
    """Markdown for one table kind (``per_game``, ``aggregate``, ``design_quality``).

    One sub-table per (game,) metric: rows = mechanisms, columns = agents (in ``columns``
    order and labels; default sorted type strings) then LLM Average. Grey cells are shown in
    italics.
    """
    notes = notes or {}
    columns = columns or AgentColumns()
    title = {"per_game": "Per-game tables", "aggregate": "Aggregate over the four social dilemmas",
             "design_quality": "Mediator and contract design quality"}[kind]
    lines = [f"# {title}", ""]
    if notes.get("bootstrap"):
        lines += [f"Bootstrap intervals (CSV only): {notes['bootstrap']}.", ""]
    last_section = None
    for section, metric, sub in _subtables(frame, kind):
        if kind == "per_game" and section != last_section:
            lines += [f"## {section}", ""]
            last_section = section
        agents = _agents(sub, columns)
        lines += [f"### {metric}", "", _caption(kind, metric, notes, sub) + _tie_note(notes, sub, kind), ""]
        header = ["Mechanism"] + [columns.label(a) for a in agents]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * len(agents)) + "|")
        for mech in _mechanisms(sub):
            rows = {r["agent"]: r for r in sub.filter(pl.col("mechanism") == mech).iter_rows(named=True)}
            cells = [_mechanism_label(mech)]
            for agent in agents:
                r = rows.get(agent)
                if r is None:
                    cells.append("–")
                else:
                    styled = _style_md(_cell_text(r, metric, kind), bool(r["bold"]), bool(r["grey"]))
                    cells.append(_with_group_md(styled, r.get("tie_group")))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _tex_escape(text: str) -> str:
    out = text
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"), ("_", r"\_"),
                 ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\textasciicircum{}")):
        out = out.replace(a, b)
    return out.replace("−", "$-$").replace("±", r"$\pm$").replace("≤", r"$\le$").replace("≥", r"$\ge$")


def _style_tex(text: str, bold: bool, grey: bool) -> str:
    text = text.replace(" ± ", r" $\pm$ ")
    if bold:
        return rf"\textbf{{{text}}}"
    if grey:
        return rf"\textcolor{{gray}}{{{text}}}"
    return text


def render_latex(frame: pl.DataFrame, kind: str, notes: dict[str, str] | None = None, columns: AgentColumns | None = None) -> str:
    """LaTeX ``table`` environments (booktabs + xcolor) for one table kind; see :func:`render_markdown`."""
    notes = notes or {}
    columns = columns or AgentColumns()
    parts = [f"% coopeval {kind} tables; needs \\usepackage{{booktabs,xcolor}}", ""]
    for section, metric, sub in _subtables(frame, kind):
        agents = _agents(sub, columns)
        caption = _tex_escape(f"{section}: {metric}. " + _caption(kind, metric, notes, sub) + _tie_note(notes, sub, kind))
        lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\caption{{{caption}}}",
                 rf"\begin{{tabular}}{{l{'r' * len(agents)}}}", r"\toprule"]
        header = ["Mechanism"] + [_tex_escape(columns.label(a)) for a in agents]
        lines.append(" & ".join(header) + r" \\")
        lines.append(r"\midrule")
        for mech in _mechanisms(sub):
            rows = {r["agent"]: r for r in sub.filter(pl.col("mechanism") == mech).iter_rows(named=True)}
            cells = [_mechanism_tex(mech)]
            for agent in agents:
                r = rows.get(agent)
                cells.append("--" if r is None else _with_group_tex(
                    _style_tex(_cell_text(r, metric, kind), bool(r["bold"]), bool(r["grey"])),
                    r.get("tie_group")))
            lines.append(" & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
        parts.extend(lines)
    return "\n".join(parts)


def _csv(frame: pl.DataFrame, columns: Sequence[str]) -> str:
    return frame.select(list(columns)).write_csv()


def write_tables(tables: TableSet, out_dir: str | Path) -> list[Path]:
    """Write ``per_game``, ``aggregate`` and ``design_quality`` as ``.csv``, ``.md`` and ``.tex``.

    CSV columns are exactly ``mechanism,game,metric,agent,mean,se,rank,ci_low,ci_high,tie_group``
    (aggregate), the same then ``players,note`` (per-game) and ``mechanism,metric,agent,mean,se``
    (design quality), with unrounded values and empty fields for missing values.

    Returns
    -------
    list[Path]
        The written files.
    """
    out = Path(out_dir)
    written = []
    for kind, frame, columns in (
        ("per_game", tables.per_game, PER_GAME_COLUMNS),
        ("aggregate", tables.aggregate, AGGREGATE_COLUMNS),
        ("design_quality", tables.design_quality, DESIGN_COLUMNS),
    ):
        contents = {
            "csv": _csv(frame, columns),
            "md": render_markdown(frame, kind, tables.notes, tables.columns),
            "tex": render_latex(frame, kind, tables.notes, tables.columns),
        }
        for ext, text in contents.items():
            path = out / f"{kind}.{ext}"
            atomic_write_text(path, text)
            written.append(path)
    return written
