#!/usr/bin/env bash
# Behaviour check for refactors: compare this checkout with a git ref (default: origin/main~1)
# on the smoke config (per-table checksums of the store), `coopeval evaluate` (JSON output) and
# `coopeval reproduce` on the released run (tables byte for byte, store tables by checksum).
# Usage: benchmarks/behaviour_check.sh <git-ref> [shared-data-dir]
# Takes ~3 min on 2 cores (two smoke runs, two imports). Exits 1 on any difference.
set -euo pipefail
ref=${1:?usage: benchmarks/behaviour_check.sh <git-ref> [shared-data-dir]}
data=${2:-../shared/data/coopeval_run1}
repo=$(cd "$(dirname "$0")/.." && pwd)
py="$repo/.venv/bin/python"
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add -q --detach "$work/base" "$ref"
git -C "$repo" archive HEAD | (mkdir -p "$work/new" && tar -x -C "$work/new")
cat > "$work/tensor.json" <<'JSON'
{"agents": ["a", "b", "c"], "payoffs": [[2.0, 0.5, 1.0], [3.0, 1.0, 0.2], [1.5, 2.5, 1.2]]}
JSON
status=0
for side in base new; do
    src="$work/$side/src"
    (cd "$work/$side" && PYTHONPATH="$src" "$py" -m snakemake --cores 2 all --configfile config/smoke.yaml -q >"$work/$side.smoke.log" 2>&1)
    PYTHONPATH="$src" "$py" "$repo/benchmarks/store_checksums.py" "$work/$side/results/coopeval.duckdb" >"$work/$side.store.tsv"
    for rule in strictest reference-vertex; do
        PYTHONPATH="$src" "$py" -m coopeval.cli evaluate "$work/tensor.json" --dr-rule "$rule" >"$work/$side.evaluate.$rule.json"
    done
    PYTHONPATH="$src" "$py" -m coopeval.cli reproduce "$(cd "$repo" && realpath "$data")" --out "$work/$side.reproduce" >/dev/null 2>&1
    PYTHONPATH="$src" "$py" "$repo/benchmarks/store_checksums.py" "$work/$side.reproduce/coopeval.duckdb" >"$work/$side.reproduce.tsv"
done
diff "$work/base.store.tsv" "$work/new.store.tsv" && echo "smoke store: every table identical" || status=1
for rule in strictest reference-vertex; do
    cmp "$work/base.evaluate.$rule.json" "$work/new.evaluate.$rule.json" && echo "evaluate ($rule): identical" || status=1
done
for f in "$work"/base.reproduce/*.{csv,md,tex}; do
    cmp "$f" "$work/new.reproduce/$(basename "$f")" || status=1
done
echo "reproduce tables: compared $(ls "$work"/base.reproduce/*.{csv,md,tex} | wc -l) files"
diff "$work/base.reproduce.tsv" "$work/new.reproduce.tsv" && echo "reproduce store: every table identical" || status=1
exit $status
