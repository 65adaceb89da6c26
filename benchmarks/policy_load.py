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

from result_file import meta, spread, write

from mutepro.policy.loader import load_policy


def policy_file(directory: Path, entries: int) -> Path:
    lines = ["x-s: &s {keyed_policy: hold}", "topics:"]
    lines += [f"  t{i}: {{<<: *s, keyed_policy: fail, slow_call: {{threshold_ms: {100 + i}}}}}" for i in range(entries)]
    path = directory / f"p{entries}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="500,4000,8000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None, help="directory for policy_load.json (default benchmarks/results)")
    args = ap.parse_args(argv)
    about = meta("policy_load", argv, sizes=args.sizes, repeat=args.repeat)
    seen: dict[int, list[float]] = {}
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
            seen[n] = times
    base = sizes[0]
    for n in sizes:
        print(f"{n:>7} entries  {best[n]:7.3f} s  x{best[n] / best[base]:5.1f} time for x{n / base:4.1f} entries")
    result = {
        "meta": about,
        "seconds_to_load": {str(n): spread(seen[n]) for n in sizes},
        # linear growth keeps this near 1 (time ratio over size ratio, best of each size)
        "growth_over_linear": {str(n): round(best[n] / best[base] / (n / base), 3) for n in sizes[1:]},
    }
    print(f"wrote {write('policy_load', result, args.out)}")


if __name__ == "__main__":
    main()
