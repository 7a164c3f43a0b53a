"""File a run's outputs into bench/results/<topic>/ under common.result_path's names, then
regenerate bench/results/INDEX.md.

    python3 -m bench.adopt --topic msm gpu-out/msm.json
    python3 -m bench.adopt --topic porep --commit 5cff3e4 --host h200 --label timeline gpu-out/timeline-porep.jsonl

A JSON file of records (results.md) is split by commit and host, each part appended to
its file, the records in their order. Any other file (a log, a timeline, a picture) is
copied under the given --commit, --host, --date (default today) and --label; one over
100 KB is kept small: a JSON-lines timeline gzipped, a PNG re-encoded with a 256-colour
palette (every legend colour kept: a Gantt chart has a few hundred colours, its
anti-aliasing included).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import shutil
from pathlib import Path

from bench import common, table

LARGE_BYTES = 100_000


def adopt_records(path: Path, topic: str) -> list[Path]:
    """Append ``path``'s records to their (commit, host) files of ``topic``; the paths."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for rec in json.loads(path.read_text()):
        groups.setdefault((rec["commit"], common.host_slug([rec["device"]])), []).append(rec)
    # the host's CPU records go with its GPU's when one call measured both
    gpu_hosts = {commit: host for commit, host in groups if not host.startswith("cpu")}
    merged: dict[tuple[str, str], list[dict]] = {}
    for (commit, host), recs in groups.items():
        merged.setdefault((commit, gpu_hosts.get(commit, host)), []).extend(recs)
    written = []
    for (commit, host), recs in merged.items():
        devices = [r["device"] for r in recs]
        out = common.result_path(topic, devices, commit, recs[0]["date"])
        written.append(common.write(recs, topic, str(out)))
    return written


def adopt_artifact(path: Path, topic: str, commit: str, host: str, date: str, label: str) -> Path:
    """Copy ``path`` into ``topic``'s folder under its scheme's name, kept small."""
    ext = "".join(path.suffixes).lstrip(".") or "txt"
    name = f"{topic}-{host}-{commit}-{date}{'-' + label if label else ''}.{ext}"
    out = common.RESULTS / topic / name
    size = path.stat().st_size
    large = size > LARGE_BYTES
    if large and ext not in ("jsonl", "png"):  # a results file over it fails CI (tests/test_bench_results.py)
        raise SystemExit(f"{path}: {size} bytes, over {LARGE_BYTES}: trim it or compress it harder "
                         "(an archive as .tar.xz) before adopting it")
    out.parent.mkdir(parents=True, exist_ok=True)
    if large and ext == "jsonl":
        out = out.with_name(out.name + ".gz")
        out.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
    elif large and ext == "png":
        from PIL import Image  # matplotlib's dependency (the plot extra)

        Image.open(path).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    else:
        shutil.copyfile(path, out)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--topic", required=True, help="the benchmark: bench/results/<topic>/")
    parser.add_argument("--commit", help="other files: the commit measured")
    parser.add_argument("--host", help="other files: h200, h200x2, cpu2, ...")
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    parser.add_argument("--label", default="", help="other files: what it is (timeline, log, ...)")
    args = parser.parse_args(argv)
    for path in args.files:
        if path.suffix == ".json":
            written = adopt_records(path, args.topic)
        elif not (args.commit and args.host):
            raise SystemExit(f"{path}: not a JSON of records; give --commit and --host")
        else:
            written = [adopt_artifact(path, args.topic, args.commit, args.host, args.date, args.label)]
        for out in written:
            print(f"{path} -> {out}")
    (common.RESULTS / "INDEX.md").write_text(table.index() + "\n")


if __name__ == "__main__":
    main()
