"""CPU time of one strictest deviation-rating call, against the plain face test it replaces.

Usage::

    python benchmarks/deviation_speed.py [--tensors 40] [--seed 0]

Draws random seat-symmetric metagames (integer payoffs −5..5, symmetrised over the co-player
axes) of two shapes — 4 agent types × 2 seats and 3 types × 3 seats — and times
:func:`coopeval.evaluation.deviation.deviation_ratings` (positive duals freeze rows without a face
LP, one face LP per type on seat-symmetric tensors, rows slack at a face point are not tested)
and the test-only reference :func:`tests.evaluation.reference_deviation.reference_strictest_ratings`
(one ``linprog`` face LP per tight row: the code before the shortcuts). Prints one JSON line per
shape: CPU ms per call (``time.process_time``), LPs per call, and how many ratings differ (must
be 0).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Time both implementations on the same random metagames and print the figures."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tensors", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
    import numpy as np

    from coopeval.evaluation.deviation import deviation_ratings
    from tests.evaluation.reference_deviation import reference_strictest_ratings

    rng = np.random.default_rng(a.seed)
    for n_players, size in ((2, 4), (3, 3)):
        perms = list(itertools.permutations(range(1, n_players)))
        tensors = []
        for _ in range(a.tensors):
            raw = rng.integers(-5, 6, size=(size,) * n_players).astype(float)
            tensors.append(sum(np.transpose(raw, (0, *perm)) for perm in perms))
        started = time.process_time()
        results = [deviation_ratings(t) for t in tensors]
        new_s = time.process_time() - started
        started = time.process_time()
        reference = [reference_strictest_ratings(t) for t in tensors]
        old_s = time.process_time() - started
        print(json.dumps({
            "shape": f"{size} types x {n_players} seats", "tensors": len(tensors),
            "ms_per_call": round(1e3 * new_s / len(tensors), 2),
            "reference_ms_per_call": round(1e3 * old_s / len(tensors), 2),
            "lps_per_call": round(sum(r.n_main_lps + r.n_face_lps for r in results) / len(tensors), 2),
            "differing_ratings": sum(r.ratings != q for r, q in zip(results, reference, strict=True)),
        }))


if __name__ == "__main__":
    main()
