"""Build the explorer site from a store: ``index.html``, its assets and the data scripts.

Layout of the output folder::

    index.html  explorer.js  explorer.css
    data/index.js                 run overview, leaderboards, prompt sensitivity, chart kinds, list of cells
    data/charts/<n>.js            the rows of one study-wide chart (coopeval.explorer.charts)
    data/cell/<file>.js           one cell: its episodes and the study's per-cell data (file: cell_file)
    data/ep/<key>.<part>.js       one episode part: decisions with attempts and judge labels (gzip-packed: scripts.write_packed)
    data/dix/<bucket>.js          decision_id → (cell, episode, part), 256 buckets
    data/flags/<n>.js             failed, re-asked and truncated decisions of the whole run
    data/words/…                  the run-wide search over replies (coopeval.explorer.search_index)

The store is read in chunks of cells (about ``CHUNK_DECISIONS`` decisions each), one DuckDB
query per table and chunk, so memory holds one chunk at a time (plus the decision index, a few
dozen bytes per decision).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import operator
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from coopeval.core.duckdb_settings import locked_store_message
from coopeval.explorer.aggregate import result_tables
from coopeval.explorer.charts import CooperationTally, study_charts, trajectory_chart
from coopeval.explorer.episodes import Episode, cell_episodes, reply_words
from coopeval.explorer.extras import CHART_EXTRAS, EXTRAS, REBUILD, WHERE, unreadable_extras
from coopeval.explorer.overview import STUDY_TABLES, leaderboards, missing_tables, run_overview
from coopeval.explorer.pairs import pair_rows, pairs_info
from coopeval.explorer.privacy import PRIVACY_NOTE
from coopeval.explorer.queries import columns, grouped, rows, table_names
from coopeval.explorer.scripts import PART_BYTES, to_strict_json, write_packed, write_script
from coopeval.explorer.search_index import SearchIndex
from coopeval.explorer.sensitivity import sensitivity_reports

ASSETS = (
    "index.html", "register.js", "explorer.js", "studies.js", "export.js", "search.js", "sensitivity.js", "charts.js", "pairs.js", "explorer.css",
    "vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "vega-interpreter.js", "vendor.json",
    "vega.LICENSE", "vega-lite.LICENSE", "vega-embed.LICENSE", "vega-interpreter.LICENSE",
)  # fmt: skip
"""The page's files: hand-written, and the chart scripts copied from npm (``vendor.json``: versions, hashes, licences)."""
BUCKETS = 256
FLAG_CHUNK = 10_000
CHUNK_DECISIONS = 5_000
"""Cells are read from the store in chunks of about this many decisions (memory: one chunk)."""
MEMORY_LIMIT = "256MB"
"""DuckDB's memory limit while building (sorts beyond it spill to a temporary folder)."""


POWERS = [pow(31, k, BUCKETS) for k in range(4096)]
"""31^k mod 256: the bucket of an ASCII id is a weighted sum of its bytes (no Python loop per character)."""


def bucket(decision_id: str) -> int:
    """Bucket of the decision index holding ``decision_id``: ``h = (31 h + code) mod 256`` over
    its characters (the page computes the same over UTF-16 code units; ids are ASCII)."""
    n = len(decision_id)
    if decision_id.isascii() and n <= len(POWERS):
        return int(sum(map(operator.mul, decision_id.encode(), POWERS[n - 1 :: -1] if n else []))) % BUCKETS
    h = 0
    for ch in decision_id:
        h = (h * 31 + ord(ch)) % BUCKETS
    return h


PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
"""A cell id that is its own file name (our 12-hex ids, most reference ids)."""


def cell_file(cell_id: str) -> str:
    """The name (without ``.js``) of a cell's data file: the id when it is a plain name
    (:data:`PLAIN_NAME`), else ``c`` + 16 hex digits of its SHA-1 (a reference id holds ``/``;
    a damaged store may hold ``../…``, which must not name a path outside the site). The index
    lists it per cell (``file``), where the page looks it up."""
    return cell_id if PLAIN_NAME.fullmatch(cell_id) else "c" + hashlib.sha1(cell_id.encode()).hexdigest()[:16]


@dataclass
class BuildReport:
    """What :func:`build_site` wrote: counts, the largest file (bytes), the missing tables, the
    tables of another coopeval version (``unreadable``: study → ``"<table> (<reason>)"``) and the
    decision ids a store written before ids were unique holds in more than one cell (``shared_ids``:
    their ``#decision=`` links open the first cell's decision)."""

    out: Path
    cells: int = 0
    decisions: int = 0
    files: int = 0
    bytes: int = 0
    largest: tuple[str, int] = ("", 0)
    missing: dict[str, list[str]] = field(default_factory=dict)
    unreadable: dict[str, list[str]] = field(default_factory=dict)
    shared_ids: list[str] = field(default_factory=list)
    stale_tables: str | None = None
    """Why the run's result tables beside the store were not used (another run's), or None."""
    seconds: float = 0.0

    def note(self, relative: str, size: int) -> None:
        """Count one written file of ``size`` bytes."""
        self.files += 1
        self.bytes += size
        if size > self.largest[1]:
            self.largest = (relative, size)


def _parts(episode: Episode) -> list[list[tuple[dict[str, Any], str]]]:
    """The episode's decisions with their JSON, in parts of at most ``PART_BYTES`` (a single
    larger decision forms a part alone)."""
    parts: list[list[tuple[dict[str, Any], str]]] = [[]]
    size = 0
    for decision in episode.decisions:
        encoded = to_strict_json(decision)
        if parts[-1] and size + len(encoded) > PART_BYTES:
            parts.append([])
            size = 0
        parts[-1].append((decision, encoded))
        size += len(encoded) + 1
    return parts


def _check_out(out: Path) -> None:
    """Refuse an output folder that is not empty and not an explorer's: nothing of a user's is
    ever overwritten (a file, the current folder, another site)."""
    if not str(out).strip():
        raise FileExistsError("--out: give the folder to build the site in, e.g. results/explorer")
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"--out: {out} is a file, not a folder; pass a folder for the site")
    if out.is_dir() and any(p.name != SCREENSHOTS for p in out.iterdir()) and not (out / "data" / MARKER).exists():
        raise FileExistsError(
            f"--out: {out} is not empty and holds no explorer (no data/{MARKER}); pass an empty or new folder"
        )


def _prepare(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    data = out / "data"
    if data.exists():
        shutil.rmtree(data)
    data.mkdir()
    (data / MARKER).write_text("written by coopeval.explorer; replaced by every build\n")
    assets = importlib.resources.files("coopeval.explorer") / "assets"
    for name in ASSETS:
        (out / name).write_bytes((assets / name).read_bytes())


SCREENSHOTS = "screenshots"
"""A folder the tests and benchmarks/explorer.py write into the site's folder; kept by a build."""

MARKER = "EXPLORER"
"""The file that marks ``data/`` as an explorer's (written first, so an interrupted build is replaced too)."""

CONFIG_NAME = "config.effective.yaml"
"""The merged config a run writes beside its store (shown on the overview when present)."""


def _config_text(store: Path) -> str | None:
    path = store.parent / CONFIG_NAME
    return path.read_text(encoding="utf-8") if path.is_file() else None


def build_site(store: str | Path, out: str | Path, *, raw_replies: bool = True) -> BuildReport:
    """Write the explorer of ``store`` into ``out`` and return what was written.

    Parameters
    ----------
    store:
        A coopeval DuckDB store (``results/coopeval.duckdb``), opened read-only; the run's
        merged config beside it (``config.effective.yaml``), if any, is shown on the overview.
    out:
        Output folder (created; its ``data/`` is replaced).
    raw_replies:
        False leaves the models' raw reply texts and reasoning out (parsed answers stay).

    Raises
    ------
    FileNotFoundError
        ``store`` does not exist, is not a DuckDB database or holds no tables (nothing is written).
    FileExistsError
        ``out`` is a file, or a non-empty folder that holds no explorer (nothing is written).
    """
    started = time.perf_counter()
    store_path, out_path = Path(store), Path(out)
    if store_path.is_dir():
        raise FileNotFoundError(f"store {store_path} is a folder; pass the DuckDB file, e.g. {store_path / 'coopeval.duckdb'}")
    if not store_path.is_file():
        raise FileNotFoundError(f"store {store_path} not found: build it with `snakemake --cores 2 store` or pass another STORE")
    _check_out(out_path)
    try:  # opened before anything is written, so a bad store leaves an existing site as it was
        con = duckdb.connect(str(store_path), read_only=True)
    except duckdb.Error as exc:
        locked = locked_store_message(store_path, exc)
        raise FileNotFoundError(locked or f"store {store_path} is not a readable DuckDB database ({exc}); pass a coopeval store") from None
    if not table_names(con):
        con.close()
        raise FileNotFoundError(f"store {store_path} holds no tables (an empty DuckDB file, not a coopeval store); pass the store a run wrote")
    _prepare(out_path)
    report = BuildReport(out_path)
    spill = tempfile.TemporaryDirectory(prefix="explorer-spill-")
    try:
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        con.execute(f"SET temp_directory = '{spill.name}'")
        con.execute("SET preserve_insertion_order = false")
        con.execute("SET threads = 2")
        con.execute("SET enable_progress_bar = false")
        tables = table_names(con)
        report.missing = missing_tables(tables)
        report.unreadable = unreadable_extras(con, tables, report.missing)
        index = _build_cells(con, tables, out_path, report, raw_replies, spill.name)
        skip = {*report.missing, *report.unreadable}
        aggregate, per_game, report.stale_tables = result_tables(store_path, con, tables) if "metrics" in tables else (None, None, None)
        boards = leaderboards(con, tables, skip=skip, aggregate=aggregate, per_game=per_game)
        index.update(
            {
                "built_utc": datetime.now(UTC).isoformat(timespec="seconds"),
                "store": store_path.name,
                "raw_replies": raw_replies,
                "privacy": PRIVACY_NOTE,
                "missing": report.missing,
                "unreadable": report.unreadable,
                "shared_ids": {"count": len(report.shared_ids), "examples": report.shared_ids[:5]},
                "stale_tables": report.stale_tables,
                "rebuild": REBUILD,
                "overview": run_overview(con, tables),
                "leaderboards": boards,
                "charts": _write_charts(out_path, report, study_charts(con, boards, [s for s in STUDY_TABLES if s not in skip])),
                "sensitivity": sensitivity_reports(con, tables),
                "pairs": _write_pairs(out_path, report, pair_rows(con, tables, index["cells"]), index["cells"]),
                "config": _config_text(store_path),
                "buckets": BUCKETS,
            }
        )
    finally:
        con.close()
        spill.cleanup()
    report.note("data/index.js", write_script(out_path, "data/index.js", "index", index))
    report.seconds = time.perf_counter() - started
    return report


def _write_pairs(out: Path, report: BuildReport, found: list[dict[str, Any]], cells: list[dict[str, Any]]) -> dict[str, Any]:
    """Write the model-against-model page's rows (``data/pairs.js``); the index holds their summary
    (:func:`coopeval.explorer.pairs.pairs_info`)."""
    if found:
        report.note("data/pairs.js", write_script(out, "data/pairs.js", "pairs", found))
    return pairs_info(found, cells)


def _write_charts(out: Path, report: BuildReport, charts: dict[str, Any]) -> dict[str, Any]:
    """Write each study-wide chart's rows to ``data/charts/<n>.js``; the index lists the charts without their rows."""
    listed = []
    for number, chart in enumerate(charts["charts"]):
        relative = f"data/charts/{number}.js"
        report.note(relative, write_script(out, relative, f"chart:{number}", chart["rows"]))
        listed.append({k: v for k, v in chart.items() if k != "rows"} | {"file": number})
    return {"kinds": charts["kinds"], "charts": listed, "notes": charts.get("notes", {}), "filters": charts.get("filters", {}),
            "domains": charts.get("domains", {}), "ranges": charts.get("ranges", {})}


def _chunks(cells: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Consecutive cells with at most ``CHUNK_DECISIONS`` decisions together (a larger cell alone)."""
    chunk: list[dict[str, Any]] = []
    size = 0
    for cell in cells:
        if chunk and size + int(cell["decisions"]) > CHUNK_DECISIONS:
            yield chunk
            chunk, size = [], 0
        chunk.append(cell)
        size += int(cell["decisions"])
    if chunk:
        yield chunk


def _chunk_rows(con: duckdb.DuckDBPyConnection, tables: set[str], skip: set[str], ids: list[str]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Query name → cell id → rows, for the cells ``ids``: decisions, attempts, judgements and each study's extras."""
    queries = {"decisions": f"SELECT * FROM decisions {WHERE} ORDER BY cell_id, matchup_id NULLS FIRST, round, seat, kind, decision_id"}
    if "llm_calls" in tables:
        queries["llm_calls"] = f"SELECT * FROM llm_calls {WHERE} AND coalesce(kind, '') <> 'judge' ORDER BY cell_id, decision_id, attempt"
    if "judgements" in tables:
        queries["judgements"] = f"SELECT * FROM judgements {WHERE} ORDER BY cell_id, decision_id"
    for study, fields in EXTRAS.items():
        if study not in skip:
            queries.update({f"{study}:{name}": extra.sql(WHERE) for name, extra in fields.items() if extra.table in tables})
    return {name: grouped(con, sql, [ids]) for name, sql in queries.items()}


def _extras(found: dict[str, dict[str, list[dict[str, Any]]]], study: str, cell_id: str) -> dict[str, Any]:
    out = {name.split(":", 1)[1]: rows_.get(cell_id, []) for name, rows_ in found.items() if name.startswith(f"{study}:")}
    for records in out.values():
        for r in records:
            r.pop("cell_id", None)
            r.pop("source", None)
    return out


def _write_cell(
    cell: dict[str, Any],
    found: dict[str, dict[str, list[dict[str, Any]]]],
    out: Path,
    report: BuildReport,
    raw_replies: bool,
    index: list[dict[str, str]],
    flags: list[list[Any]],
    search: SearchIndex,
) -> None:
    """Write one cell's episode parts and cell file; add its decisions to ``index`` and ``flags``."""
    cell_id, study = str(cell["cell_id"]), str(cell["study"])
    summaries = []
    episodes = cell_episodes(
        cell_id,
        found["decisions"].get(cell_id, []),
        found.get("llm_calls", {}).get(cell_id, []),
        found.get("judgements", {}).get(cell_id, []),
        raw_replies=raw_replies,
    )
    cooperation = CooperationTally(cell_id, str(cell["game"])) if study == "coopeval" else None
    for episode in episodes:
        if cooperation is not None:
            cooperation.add(episode.matchup, episode.decisions)
        parts = _parts(episode)
        for number, part in enumerate(parts):
            relative = f"data/ep/{episode.key}.{number}.js"
            encoded = '{"decisions":[' + ",".join(e for _, e in part) + "]}"
            report.note(relative, write_packed(out, relative, f"ep:{episode.key}:{number}", encoded))
            for d, _ in part:
                did = str(d["decision_id"])
                place = index[bucket(did)]
                if did in place:
                    report.shared_ids.append(did)
                    continue
                place[did] = f"{cell_id}/{episode.key}/{number}"
                failed, reasked, cut = d["status"] == "failed", (d.get("n_attempts") or 0) > 1, bool(d.get("truncated"))
                if failed or reasked or cut:
                    flags.append([did, study, cell_id, episode.key, number, d["agent"], d["kind"], d["status"], d.get("n_attempts"), cut, d.get("round")])
        if raw_replies:
            search.add(cell_id, episode.key, len(parts), reply_words(episode.decisions))
        summaries.append(episode.summary(len(parts)))
        report.decisions += len(episode.decisions)
    extras = _extras(found, study, cell_id)
    payload = {**cell, "episodes": summaries, "extras": extras, "charts": _cell_charts(cell, extras, cooperation)}
    relative = f"data/cell/{cell['file']}.js"
    report.note(relative, write_script(out, relative, f"cell:{cell_id}", payload))
    report.cells += 1

def _cell_charts(cell: dict[str, Any], extras: dict[str, Any], cooperation: CooperationTally | None) -> list[dict[str, Any]]:
    """The cell page's charts (coopeval.explorer.charts): CoopEval's cooperation per round and replicator trajectory."""
    found = {name: extras.pop(name) for name in CHART_EXTRAS if name in extras}
    if cell["study"] != "coopeval":
        return []
    charts = []
    tallied = cooperation.rows() if cooperation is not None else []
    if tallied:
        charts.append({"kind": "cooperation", "title": "Cooperation over rounds", "rows": tallied})
    if found.get("trajectory"):
        charts.append(trajectory_chart(str(cell["cell_id"]), found["trajectory"]))
    return charts


def _cell_variants(con: duckdb.DuckDBPyConnection, tables: set[str]) -> dict[str, tuple[str | None, int | None]]:
    """CoopEval cell id → (its variant, its number of players N) from the store's ``cells`` table
    (empty when the table or its ``variant`` column is missing; N None without a ``players`` column):
    the cells page tells a mechanism's variants apart by them and narrows to one (``&variant=``)."""
    present = columns(con, "cells") if "cells" in tables else set()
    if "variant" not in present:
        return {}
    players = "players" if "players" in present else "NULL"
    return {str(r["cell_id"]): (r["variant"], r["players"]) for r in rows(con, f"SELECT cell_id, variant, {players} AS players FROM cells")}


POPULATION_FACTS = {"gossip_cells": ("model", "matching"), "evolution_cells": ("model", "variant")}
"""Manifest table → the columns a gossip or evolution cell carries in the index: its model, and
the scope part its comparisons have beyond the cell's condition and testbed (the matching) or
protocol (the variant), so that the cells page narrows to a comparison's cells (``&matching=``,
``&variant=``, ``&a=``/``&b=``)."""


def _population_cells(con: duckdb.DuckDBPyConnection, tables: set[str]) -> dict[str, dict[str, Any]]:
    """Gossip and evolution cell id → :data:`POPULATION_FACTS` from their manifest tables (the
    columns a table has; empty without the tables)."""
    out: dict[str, dict[str, Any]] = {}
    for table, wanted in POPULATION_FACTS.items():
        present = [c for c in wanted if table in tables and c in columns(con, table)]
        if not present or "cell_id" not in columns(con, table):
            continue
        for r in rows(con, f"SELECT cell_id, {', '.join(present)} FROM {table}"):
            out[str(r.pop("cell_id"))] = {k: v for k, v in r.items() if v is not None}
    return out


def _build_cells(con: duckdb.DuckDBPyConnection, tables: set[str], out: Path, report: BuildReport, raw_replies: bool, spill: str) -> dict[str, Any]:
    if "decisions" not in tables:
        return {"cells": [], "flag_parts": 0, "flag_count": 0, "search": None}
    cells = rows(
        con,
        "SELECT cell_id, study, min(mechanism) AS mechanism, min(game) AS game, min(run) AS run,"
        " count(*) AS decisions, count(*) FILTER (WHERE status = 'failed') AS failed,"
        " count(*) FILTER (WHERE n_attempts > 1) AS reasked, count(*) FILTER (WHERE truncated) AS truncated,"
        " list(DISTINCT agent ORDER BY agent) AS agents"
        " FROM decisions GROUP BY cell_id, study ORDER BY cell_id, study",
    )
    variants = _cell_variants(con, tables)
    manifests = _population_cells(con, tables)
    for cell in cells:
        cell["file"] = cell_file(str(cell["cell_id"]))
        if cell["study"] == "coopeval" and variants:
            variant, players = variants.get(str(cell["cell_id"]), (None, None))
            cell["variant"] = variant or "default"
            if players is not None:
                cell["players"] = players
        elif str(cell["cell_id"]) in manifests:
            cell.update(manifests[str(cell["cell_id"])])
    index: list[dict[str, str]] = [{} for _ in range(BUCKETS)]
    flags: list[list[Any]] = []
    search = SearchIndex(spill)
    try:
        for chunk in _chunks(cells):
            found = _chunk_rows(con, tables, {*report.missing, *report.unreadable}, [str(c["cell_id"]) for c in chunk])
            for cell in chunk:
                _write_cell(cell, found, out, report, raw_replies, index, flags, search)
            search.flush()
        words = search.write(out, report.note) if raw_replies else None
    finally:
        search.close()
    for number, entries in enumerate(index):
        relative = f"data/dix/{number}.js"
        report.note(relative, write_script(out, relative, f"dix:{number}", entries))
    flag_chunks = [flags[i : i + FLAG_CHUNK] for i in range(0, len(flags), FLAG_CHUNK)]
    for number, flag_chunk in enumerate(flag_chunks):
        relative = f"data/flags/{number}.js"
        report.note(relative, write_script(out, relative, f"flags:{number}", flag_chunk))
    cells.sort(key=lambda c: (str(c["study"]), str(c["mechanism"]), str(c.get("variant", "")), str(c["game"]), str(c["run"]), str(c["cell_id"])))
    return {"cells": cells, "flag_parts": len(flag_chunks), "flag_count": len(flags), "search": words}
