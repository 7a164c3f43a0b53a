"""Two trees' one-shot `prove`, alternating in one run: what a change did to cold_prove_log14
on a host whose processes run at different speeds (bench/NOTES.md, 2026-12-05, late session).

    python3 -m bench.startup_ab --base DIR [--cpu] [--log 14] [--runs 10] [--no-compile] [--out FILE]

DIR is another checkout's root (e.g. `git worktree add DIR COMMIT`); its package is
imported by the base processes (PYTHONPATH), this tree's by the others. Each tree's kernels
are compiled first (`numba-cuzk compile`, unless --no-compile) into the same cache root,
where each has its own folder (kernel_cache.source_key). One MiMC 2^log key (setup by this
tree; its points checked and recorded by one prove of each), then --runs rounds of a base
process, a process of this tree and bench.startup's numba floor, the first two swapping
places each round. Prints and writes (--out, JSON, not a results record) each tree's median,
spread and walls, the floor's, and the median of the rounds' differences (this tree minus
base), which pairs processes that ran seconds apart.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from bench.startup import CLI, REPO, _process, numba_floor, user_env


def tree_env(root: Path, cache: Path) -> dict[str, str]:
    """A user's environment with ``root``'s package first on the path, kernels in ``cache``."""
    env = user_env(cache)
    env["PYTHONPATH"] = str(root) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def summary(walls: list[float]) -> dict:
    return {"median_s": round(statistics.median(walls), 4), "min_s": round(min(walls), 4),
            "max_s": round(max(walls), 4), "walls_s": [round(w, 4) for w in walls]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="the other checkout's root")
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--log", type=int, default=14)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-compile", action="store_true", help="the kernel caches are filled already")
    parser.add_argument("--cache", type=Path, default=None, help="the kernel cache root (default: a temporary one)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    backend = ["--cpu"] * args.cpu
    with tempfile.TemporaryDirectory() as tmp:
        work, cache = Path(tmp), args.cache or Path(tmp) / "cache"
        trees = {"base": tree_env(args.base.resolve(), cache), "this": tree_env(REPO, cache)}
        if not args.no_compile:
            for name, env in trees.items():
                done = _process(CLI + ["compile"], work, env)
                print(f"{name}: compiled in {done.seconds:.0f} s", flush=True)
        _process(CLI + ["setup", "--circuit", "mimc", "-k", str(args.log), "--witness", "C.wtns", "--zkey", "C.zkey",
                        "--vk", "vk.json", *backend], work, trees["this"])
        prove = CLI + ["prove", "--zkey", "C.zkey", "--witness", "C.wtns", "--json", *backend]
        for env in trees.values():  # each tree checks and records the key once
            _process(prove, work, env)
        walls: dict[str, list[float]] = {"base": [], "this": [], "floor": []}
        for r in range(args.runs):
            for name in ("base", "this") if r % 2 == 0 else ("this", "base"):
                walls[name].append(_process(prove, work, trees[name]).seconds)
            walls["floor"].append(_process(numba_floor(args.cpu), work).seconds)
            print(f"round {r + 1}: base {walls['base'][-1]:.3f} s, this {walls['this'][-1]:.3f} s, "
                  f"floor {walls['floor'][-1]:.3f} s", flush=True)
    result = {name: summary(w) for name, w in walls.items()}
    result["this_minus_base_median_s"] = round(statistics.median(
        t - b for t, b in zip(walls["this"], walls["base"])), 4)
    result["params"] = {"log": args.log, "runs": args.runs, "cpu": args.cpu, "base": str(args.base)}
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
