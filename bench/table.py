"""Tables of bench/results/: the latest record of each name, the README's headline, and
the index of every file.

Usage:
    python3 -m bench.table              # every name's latest record (docs/benchmarks/results.md)
    python3 -m bench.table --headline   # the README's headline table
    python3 -m bench.table --index      # bench/results/INDEX.md

Files are bench/results/<bench>/<bench>-<host>-<commit>-<date>[-<label>].<ext>
(common.result_path). A name's latest record is the one of the latest date; within a day,
the one with the latest ``time`` (records written since the results were organised carry
it), then the one of the later commit in git's history, then the later in its file.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import subprocess
from pathlib import Path

from bench.common import RESULTS

# The README's headline: (record name, what it measures). Peers are shown only where the
# record's peer was measured in the same call (its name says "(same call)", results.md).
HEADLINE = [
    ("fr_mul", "Fr Montgomery products, 2^22 threads x 64"),
    ("fq_mul", "Fq Montgomery products, 2^22 threads x 64"),
    ("ntt_fr_log24", "NTT over Fr, 2^24"),
    ("msm_g1_log24", "MSM G1, 2^24 points"),
    ("msm_g1_log24_upload", "MSM G1, 2^24 points, host scalars in, affine point out"),
    ("msm_g2_log20", "MSM G2, 2^20 points"),
    ("msm_g2_log20_upload", "MSM G2, 2^20 points, host scalars in, affine point out"),
    ("prove_log20", "Groth16 proof, 2^20 constraints (bit-heavy witness)"),
    ("prove_log20_mimc", "Groth16 proof, 2^20 constraints (MiMC witness)"),
    ("prove_log27_split", "Groth16 proof, 2^27 constraints (a PoRep partition, bit/tail split)"),
    ("prove_log27_split_device_ms", "the same proof's device phases"),
    ("porep_s_per_proof", "PoRep: 10 partitions of 2^27 through the engine"),
    ("porep_kernel_ms_per_partition", "PoRep: kernel time per 2^27 partition in the engine"),
    ("serve_prove_log14", "`numba-cuzk serve`: a client process per 2^14 proof"),
    ("cold_prove_log14", "one-shot `numba-cuzk prove` of the built-in MiMC at 2^14, a whole process, kernels cached"),
    ("oneshot_prove_log14", "one-shot `numba-cuzk prove` of a 2^14 circom zkey, a whole process, on the GPU host"),
    ("oneshot_prove_log14_cpu", "CPU backend: one-shot `numba-cuzk prove` of a 2^14 circom zkey, a whole process"),
    ("engine_s_per_proof_gw2", "engine: 10 partitions of 2^20 per proof"),
    ("prove_zkey_log16_cpu", "CPU backend: snarkjs zkey, 2^16 constraints"),
    ("snarkjs_prove_log16", "snarkjs 0.7.6 on the same zkey and machine"),
]
_NAME = re.compile(r"(?P<bench>[a-z0-9_-]+?)-(?P<host>[a-z0-9]+)-(?P<commit>[0-9a-f]{7}[^-]*|unknown)"
                   r"-(?P<date>\d{4}-\d\d-\d\d)(?:-(?P<label>.+?))?\.(?P<ext>[a-z.]+)")


def parse_name(path: Path) -> dict:
    """A result file's parts (bench, host, commit, date, label, ext); ValueError naming a
    file outside the scheme."""
    found = _NAME.fullmatch(path.name)
    if not found or found["bench"] != path.parent.name:
        raise ValueError(f"{path}: not <bench>/<bench>-<host>-<commit>-<date>[-<label>].<ext>")
    return found.groupdict()


@functools.cache
def commit_ranks() -> dict[str, int]:
    """Short hash -> its position in git's history (oldest 0); empty without git."""
    try:
        out = subprocess.run(["git", "rev-list", "--topo-order", "--reverse", "HEAD"], cwd=RESULTS, text=True,
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {full[:7]: rank for rank, full in enumerate(out.split())}


def records_in_order() -> list[dict]:
    """Every record of bench/results/*/*.json, oldest first (the module's docstring)."""
    ranks = commit_ranks()
    keyed = []
    for path in sorted(RESULTS.glob("*/*.json")):
        for position, rec in enumerate(json.loads(path.read_text())):
            rank = ranks.get(rec["commit"].split("+")[0][:7], -1)
            keyed.append(((rec["date"], rec.get("time", ""), rank, path.name, position), rec))
    return [rec for _, rec in sorted(keyed, key=lambda kr: kr[0])]


def latest_records() -> list[dict]:
    latest = {rec["name"]: rec for rec in records_in_order()}
    return sorted(latest.values(), key=lambda r: r["name"])


def same_call_peer(rec: dict) -> str:
    """The record's peer where it was measured beside ours: "(same call)" (one device call)
    or "(same run)" (one benchmark process, the two alternating)."""
    peer = rec.get("peer")
    tag = next((t for t in (" (same call)", " (same run)") if peer and t in peer["name"]), None)
    if tag is None:
        return ""
    return f"{peer['name'].replace(tag, '')}: {peer['value']:.4g} {peer['unit']}"


def full_table() -> str:
    lines = ["| name | value | unit | device | peer | commit | date |", "| --- | ---: | --- | --- | --- | --- | --- |"]
    for r in latest_records():
        peer = f"{r['peer']['name']}: {r['peer']['value']} {r['peer']['unit']}" if "peer" in r else ""
        lines.append(f"| {r['name']} | {r['value']:.4g} | {r['unit']} | {r['device']} | {peer} | {r['commit']} "
                     f"| {r['date']} |")
    return "\n".join(lines)


def headline_table() -> str:
    latest = {r["name"]: r for r in latest_records()}
    lines = ["| what | ours | peer, same call | device | commit | date |", "| --- | ---: | ---: | --- | --- | --- |"]
    for name, what in HEADLINE:
        r = latest[name]
        device = r["device"].removeprefix("cpu:")
        lines.append(f"| {what} (`{name}`) | {r['value']:.4g} {r['unit']} | {same_call_peer(r)} | {device} "
                     f"| {r['commit']} | {r['date']} |")
    return "\n".join(lines)


def index() -> str:
    """bench/results/INDEX.md: each benchmark's folder and files."""
    lines = ["# bench/results", "",
             "Generated by `python3 -m bench.table --index > bench/results/INDEX.md` (`python3 -m bench.adopt`,",
             "which files a run's outputs, does it too); one folder per benchmark, files named",
             "`<bench>-<host>-<commit>-<date>[-<label>].<ext>`. `moved.tsv` maps the names before",
             "this layout (bench/NOTES.md cites them). Timelines over 100 KB are gzipped: `gunzip -k` one",
             "before `numba-cuzk timeline`.", ""]
    stray = sorted(p.name for p in RESULTS.iterdir() if p.is_file() and p.name not in ("INDEX.md", "moved.tsv"))
    if stray:
        raise ValueError(f"bench/results/{stray[0]} (and {len(stray) - 1} more) outside a benchmark's folder: "
                         "file it with python3 -m bench.adopt --topic BENCH FILE")
    for folder in sorted(p for p in RESULTS.iterdir() if p.is_dir()):
        files = sorted(folder.iterdir(), key=lambda p: (parse_name(p)["date"], p.name))
        lines += [f"## {folder.name}", "", "| file | host | commit | date | records | KB |",
                  "| --- | --- | --- | --- | ---: | ---: |"]
        for path in files:
            parts = parse_name(path)
            count = len(json.loads(path.read_text())) if parts["ext"] == "json" else ""
            lines.append(f"| {path.name} | {parts['host']} | {parts['commit']} | {parts['date']} | {count} "
                         f"| {path.stat().st_size / 1000:.0f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--headline", action="store_true", help="the README's headline table")
    which.add_argument("--index", action="store_true", help="bench/results/INDEX.md")
    args = parser.parse_args(argv)
    print(headline_table() if args.headline else index() if args.index else full_table())


if __name__ == "__main__":
    main()
