"""How policy loading grows with the number of topic entries (it was quadratic: 8,000 entries took 25.7 s).

    python benchmarks/policy_load.py [--sizes 500,4000,8000] [--repeat 3]

Prints the best of ``--repeat`` loads per size and each size's time relative to the smallest; linear loading
shows ratios close to the size ratios. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from mutepro.policy.loader import load_policy


def policy_file(directory: Path, entries: int) -> Path:
    lines = ["x-s: &s {keyed_policy: hold}", "topics:"]
    lines += [f"  t{i}: {{<<: *s, keyed_policy: fail, slow_call: {{threshold_ms: {100 + i}}}}}" for i in range(entries)]
    path = directory / f"p{entries}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="500,4000,8000")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        best: dict[int, float] = {}
        for n in sizes:
            path = policy_file(Path(tmp), n)
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                load_policy(path, env={})
                times.append(time.perf_counter() - started)
            best[n] = min(times)
    base = sizes[0]
    for n in sizes:
        print(f"{n:>7} entries  {best[n]:7.3f} s  x{best[n] / best[base]:5.1f} time for x{n / base:4.1f} entries")


if __name__ == "__main__":
    main()
