"""Mutation testing on demand (mutmut 3) over the modules whose bugs would silently change results.

Usage (from the repository root, with the dev dependencies installed)::

    python benchmarks/mutation.py                    # every module below
    python benchmarks/mutation.py cache extract      # some modules (keys of MODULES)
    python benchmarks/mutation.py --report benchmarks/mutation_report.md --jobs 2

For each module the script builds a scratch copy of the repository (``src/``, ``tests/``,
``workflow/``, ``resources/``, ``config/``, ``pyproject.toml``) in a temporary folder, adds a
``[tool.mutmut]`` section that mutates only that module and runs only its test subset, runs
``mutmut run`` there and reads ``mutmut results --all true``. Nothing is written into the
repository except the optional Markdown report. A mutant is *killed* when a test fails on it
(or it times out); *survived* means every selected test passed; *no tests* means no selected
test reached the mutated function. Targets (issue 9 item 7): no survivor in the cache key and
the answer extraction, at least 90 % killed elsewhere.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COPY = ("src", "tests", "workflow", "resources", "config", "pyproject.toml")


@dataclass(frozen=True)
class Target:
    """One module under mutation and the tests that guard it."""

    label: str
    module: str
    tests: tuple[str, ...]
    strict: bool  # target: no survivor (True) or ≥ 90 % killed (False)
    timeout_multiplier: float = 15.0  # mutmut's: a mutant may take this × the clean tests' time
    isolation: str = "fork"  # mutmut's process_isolation; "forkserver" for tests using polars


MODULES: dict[str, Target] = {
    "cache": Target("cache key", "src/coopeval/cache/response_cache.py", ("tests/cache",), True),
    "extract": Target(
        "answer extraction",
        "src/coopeval/decisions/extract.py",
        ("tests/decisions/test_decisions_extract.py", "tests/decisions/test_parse_roundtrip.py",
         "tests/decisions/test_decisions_validators.py"),
        True,
    ),
    "scores": Target(
        "scores",
        "src/coopeval/evaluation/scores.py",
        ("tests/evaluation/test_scores.py", "tests/evaluation/test_evaluation_errors.py"),
        False,
    ),
    "replicator": Target(
        "replicator dynamics",
        "src/coopeval/evaluation/replicator.py",
        ("tests/evaluation/test_replicator.py", "tests/evaluation/test_evaluation_properties.py",
         "tests/evaluation/test_evaluation_errors.py"),
        False,
    ),
    "deviation": Target(
        "deviation ratings",
        "src/coopeval/evaluation/deviation.py",
        ("tests/evaluation/test_deviation.py", "tests/evaluation/test_evaluation_properties.py",
         "tests/evaluation/test_deviation_internals.py"),
        False,
        4.0,
    ),
    "bootstrap": Target(
        "bootstrap",
        "src/coopeval/studies/coopeval/tables/bootstrap.py",
        ("tests/studies/coopeval/tables",),
        False,
        4.0,
        # polars' thread pool does not survive fork: forked workers hang until the CPU limit
        "forkserver",
    ),
}

KILLED = {"killed", "timeout", "caught by type check", "segfault"}

EQUIVALENT: tuple[tuple[str, str, str, str], ...] = (
    # (module key, removed line contains, added line contains, why the mutant cannot change behaviour)
    ("cache", '.encode("utf-8")', '.encode("UTF-8")', "codec names are case-insensitive"),
    ("cache", "ensure_ascii=False", "ensure_ascii=None", "json.dumps tests the flag for truth; None is False"),
    ("cache", "allow_nan=False", "allow_nan=None", "json.dumps tests the flag for truth; None is False"),
    ("cache", "self._cache.get(key, default=None)", "self._cache.get(key, )", "diskcache's default is None"),
    # scores: the weights list has one entry per payoff by construction, so zip never truncates
    ("scores", "values, strict=True)", "values, strict=None)", "weights and values have equal length by construction"),
    ("scores", "values, strict=True)", "values, strict=False)", "weights and values have equal length by construction"),
    ("scores", "values, strict=True)", "values, )", "weights and values have equal length by construction"),
    # replicator: the tensor is checked cubic first, so every axis has the same length
    ("replicator", "t.shape[0]", "t.shape[1]", "the tensor is checked to be cubic before (all axes equal)"),
    # replicator: p.sum() − 1.0 is a multiple of 2^−52 and never equals the double 1e−9
    ("replicator", "abs(p.sum() - 1.0) > 1e-9", "abs(p.sum() - 1.0) >= 1e-9", "the difference can never equal 1e-9 exactly"),
    # replicator: the population is float (checked), so tensor × population is float already
    ("replicator", "t = np.asarray(tensor, dtype=float)", "t = np.asarray(tensor, dtype=None)", "for numeric input, products with the float population are float"),
    ("replicator", "t = np.asarray(tensor, dtype=float)", "t = np.asarray(tensor, )", "for numeric input, products with the float population are float"),
    ("replicator", "return np.asarray(f, dtype=float)", "return np.asarray(f, dtype=None)", "for numeric input, f is a product with the float population"),
    ("replicator", "return np.asarray(f, dtype=float)", "return np.asarray(f, )", "for numeric input, f is a product with the float population"),
    # deviation: scipy's linprog default method is "highs" and it lower-cases the name
    ("deviation", 'method="highs",', 'method="HIGHS",', "linprog lower-cases the method name"),
    ("deviation", 'method="highs",', "", "linprog's default method is highs"),
    # deviation: an empty inequality block and None are the same LP
    ("deviation", "A_ub=a_ub if a_ub is not None and len(a_ub) else None,",
     "A_ub=a_ub if (a_ub is not None and len(a_ub)) or True else None,", "an empty A_ub and None are the same LP"),
    ("deviation", "A_ub=a_ub if a_ub is not None and len(a_ub) else None,",
     "A_ub=a_ub if a_ub is not None or len(a_ub) else None,", "an empty A_ub and None are the same LP"),
    ("deviation", "b_ub=b_ub if b_ub is not None and len(b_ub) else None,",
     "b_ub=b_ub if (b_ub is not None and len(b_ub)) or True else None,", "an empty b_ub and None are the same LP"),
    ("deviation", "b_ub=b_ub if b_ub is not None and len(b_ub) else None,",
     "b_ub=b_ub if b_ub is not None or len(b_ub) else None,", "an empty b_ub and None are the same LP"),
    # deviation: the face LPs' bounds are σ ≥ 0, linprog's default bounds
    ("deviation", "b_eq, bounds, f\"{what} face test\")", "b_eq, None, f\"{what} face test\")",
     "σ ≥ 0 is linprog's default bound"),
    # deviation: linprog returns x as a float array; the tensor is checked cubic first
    ("deviation", "np.asarray(res.x, dtype=float)", "np.asarray(res.x, dtype=None)", "res.x is already a float array"),
    ("deviation", "np.asarray(res.x, dtype=float)", "np.asarray(res.x, )", "res.x is already a float array"),
    ("deviation", "t.shape[0]", "t.shape[1]", "the tensor is checked to be cubic before (all axes equal)"),
    # deviation: every rank is assigned before it is read
    ("deviation", "ranks = [0.0] * len(keys)", "ranks = [1.0] * len(keys)", "every entry is overwritten"),
)
"""Surviving mutants that are provably equivalent to the original (reported, not counted)."""


def equivalence(key: str, diff: str) -> str:
    """The reason a survivor's diff (in module ``key``) is an equivalent mutant, or ""."""
    removed = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    for module, old, new, why in EQUIVALENT:
        if module == key and not new:  # a deleted argument line (the rest of the diff unchanged)
            rest = [line for line in removed if old not in line]
            if len(rest) == len(removed) - 1 and [r.strip() for r in rest] == [a.strip() for a in added]:
                return why
        if (
            module == key
            and len(removed) == len(added) == 1
            and old in removed[0]
            and new in added[0]
            and removed[0].replace(old, new) == added[0]
        ):
            return why
    return ""


@dataclass
class Outcome:
    """mutmut's verdicts for one module."""

    target: Target
    status: dict[str, str] = field(default_factory=dict)
    diffs: dict[str, str] = field(default_factory=dict)
    equivalent: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    error: str = ""

    @property
    def killed(self) -> int:
        return sum(s in KILLED for s in self.status.values())

    @property
    def unchecked(self) -> int:
        """Mutants not run (the module's time limit stopped mutmut first)."""
        return sum(s == "not checked" for s in self.status.values())

    @property
    def total(self) -> int:
        """Mutants counted: all checked ones but the equivalent ones."""
        return len(self.status) - len(self.equivalent) - self.unchecked

    @property
    def survivors(self) -> list[str]:
        return sorted(
            k for k, s in self.status.items() if s not in KILLED and s != "not checked" and k not in self.equivalent
        )

    @property
    def rate(self) -> float:
        return self.killed / self.total if self.total else 0.0

    @property
    def meets_target(self) -> bool:
        complete = bool(self.status) and not self.unchecked
        return complete and (not self.survivors if self.target.strict else self.rate >= 0.9)


def toml_list(items: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join(f'"{i}"' for i in items) + "]"


def workspace(target: Target, root: Path) -> Path:
    """A scratch copy of the repository whose pyproject mutates only ``target.module``."""
    work = root / target.module.replace("/", "_")
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "mutants")
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, work / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, work / name)
    pyproject = (work / "pyproject.toml").read_text(encoding="utf-8")
    pyproject = re.sub(r"(?ms)^\[tool\.mutmut\].*?(?=^\[|\Z)", "", pyproject)
    pyproject += (
        "\n[tool.mutmut]\n"
        'source_paths = ["src"]\n'
        f"only_mutate = {toml_list([target.module])}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(target.tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-m", "not slow and not local_llm", "-x", "-q"]\n'
        'also_copy = ["workflow", "resources", "config"]\n'
        "use_git_change_detection = false\n"
        f"timeout_multiplier = {target.timeout_multiplier}\n"
        f'process_isolation = "{target.isolation}"\n'
        + ('forkserver_warmup = "none"\n' if target.isolation == "forkserver" else "")
    )
    (work / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return work


def run_target(key: str, target: Target, root: Path, jobs: int, timeout: float) -> Outcome:
    """Run mutmut on one module and collect every mutant's verdict (and survivors' diffs)."""
    outcome = Outcome(target)
    work = workspace(target, root)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    # One BLAS/OpenMP thread: mutmut forks its workers, and a BLAS thread pool inherited across
    # fork spins until the CPU limit (every bootstrap mutant "timed out" before this).
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    started = time.perf_counter()
    # Own process group, so a timeout stops mutmut's forked workers too.
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs)],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            outcome.error = out[-2000:]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        outcome.error = f"stopped after {timeout:.0f} s; verdicts so far are partial (not checked = not run)"
    outcome.seconds = time.perf_counter() - started
    listing = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"], cwd=work, env=env, capture_output=True, text=True
    )
    for line in listing.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name:
            outcome.status[name] = status
    for name in outcome.survivors:
        shown = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=work, env=env, capture_output=True, text=True)
        outcome.diffs[name] = shown.stdout.strip()
        why = equivalence(key, outcome.diffs[name])
        if why:
            outcome.equivalent[name] = why
    return outcome


def report(outcomes: list[Outcome]) -> str:
    """The Markdown report: a per-module table, then every survivor with its diff."""
    lines = [
        "# Mutation report (mutmut)",
        "",
        "Produced by `python benchmarks/mutation.py` (mutmut "
        f"{_mutmut_version()}, Python {sys.version.split()[0]}). Target: no survivor in the cache key and "
        "the answer extraction, ≥ 90 % killed elsewhere.",
        "",
        "Equivalent mutants (provably unable to change behaviour; listed at the end) are not counted.",
        "",
        "| module | tests | killed / total | killed % | survived | no tests | equivalent | not run | time | target |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        survived = sum(o.status[k] == "survived" for k in o.survivors)
        untested = sum(o.status[k] == "no tests" for k in o.survivors)
        if o.meets_target:
            verdict = "met"
        elif o.unchecked:
            verdict = f"partial ({'no survivor so far' if o.target.strict else f'{100 * o.rate:.0f} % so far'})"
        else:
            verdict = "error" if o.error and not o.status else "not met"
        lines.append(
            f"| {o.target.label} (`{o.target.module.removeprefix('src/')}`) | {', '.join(f'`{t}`' for t in o.target.tests)} "
            f"| {o.killed} / {o.total} | {100 * o.rate:.1f} | {survived} | {untested} | {len(o.equivalent)} "
            f"| {o.unchecked} | {o.seconds:.0f} s | {verdict} |"
        )
    for o in outcomes:
        if o.error:
            lines += ["", f"**{o.target.label}**: {o.error.strip().splitlines()[-1] if o.error.strip() else 'error'}"]
    for o in outcomes:
        if not o.survivors:
            continue
        lines += ["", f"## Surviving mutants: {o.target.label}", ""]
        for name in o.survivors:
            lines += [f"### `{name}` ({o.status[name]})", "", "```diff", o.diffs.get(name, ""), "```", ""]
    equivalent = [(o, name) for o in outcomes for name in sorted(o.equivalent)]
    if equivalent:
        lines += ["", "## Equivalent mutants (not counted)", ""]
        for o, name in equivalent:
            changed = [line for line in o.diffs[name].splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")]
            lines.append(f"- `{name}`: `{changed[-1][1:].strip()}` ({o.equivalent[name]})")
    return "\n".join(lines).rstrip() + "\n"


def _mutmut_version() -> str:
    from importlib.metadata import version

    return version("mutmut")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", choices=[[], *MODULES], help="keys of MODULES (default: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutmut --max-children")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per module before stopping")
    parser.add_argument("--report", type=Path, help="write the Markdown report here")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders (printed)")
    args = parser.parse_args(argv)
    keys = args.modules or list(MODULES)
    root = Path(tempfile.mkdtemp(prefix="coopeval-mutation-"))
    outcomes = []
    try:
        for key in keys:
            target = MODULES[key]
            print(f"== {target.label}: mutating {target.module} against {' '.join(target.tests)}", flush=True)
            outcome = run_target(key, target, root, args.jobs, args.timeout)
            outcomes.append(outcome)
            print(
                f"   {outcome.killed}/{outcome.total} killed ({100 * outcome.rate:.1f} %; "
                f"{len(outcome.equivalent)} equivalent, {outcome.unchecked} not run), "
                f"survivors: {', '.join(outcome.survivors) or 'none'} [{outcome.seconds:.0f} s]",
                flush=True,
            )
            if outcome.error:
                print(f"   note: {outcome.error.strip().splitlines()[-1] if outcome.error.strip() else 'error'}", flush=True)
    finally:
        if args.keep:
            print(f"scratch folders kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    text = report(outcomes)
    if args.report:
        args.report.write_text(text, encoding="utf-8")
        print(f"report written to {args.report}")
    else:
        print(text)
    return 0 if all(o.meets_target for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
