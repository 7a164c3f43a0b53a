"""Merge repeated runs of one benchmark from one call into a single record per name.

A headline figure counts once it reproduces: three runs in one call, the spread reported.
bench/gpu_check.sh's kernels section runs a step given again as
msm.json, msm-2.json, ...; this keeps, per record name, the median of the runs' values as
``value``, with ``params.repeat_medians`` (each run's value, in run order),
``params.spread_pct`` ((max - min) / median, %) and ``params.call``, then appends the
merged records to bench/results/<topic>/ (common.result_path, or --out). Records measured by one
run only are kept as they are. Usage:

    python3 -m bench.repeats gpu-out/msm.json gpu-out/msm-2.json gpu-out/msm-3.json --topic msm --call NAME
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from bench import common


def merge(runs: list[list[dict]], call: str) -> list[dict]:
    """One record per name, in the first run's order; repeated names get the median."""
    by_name: dict[str, list[dict]] = {}
    for records in runs:
        for record in records:
            by_name.setdefault(record["name"], []).append(record)
    merged = []
    for name, records in by_name.items():
        values = [r["value"] for r in records]
        middle = statistics.median(values)
        record = min(records, key=lambda r: abs(r["value"] - middle))  # its stages and peer go with it
        record = {**record, "value": middle, "params": dict(record.get("params", {}))}
        if len(records) > 1:
            spread = (max(values) - min(values)) / middle * 100 if middle else 0.0
            record["params"].update(repeat_medians=values, spread_pct=round(spread, 2),
                                    stat=f"median of {len(values)} runs in one call, each "
                                         f"{record['params'].get('stat', 'a median')}")
        record["params"]["call"] = call
        merged.append(record)
    return merged


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="the runs' json files (lists of records)")
    parser.add_argument("--topic", required=True, help="the benchmark: bench/results/<topic>/")
    parser.add_argument("--call", required=True, help="names the call (its log), e.g. kernels-h200-<commit>")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    merged = merge([json.loads(Path(f).read_text()) for f in args.files], args.call)
    path = common.write(merged, args.topic, args.out)
    print(f"bench.repeats: {len(merged)} records from {len(args.files)} runs -> {path}")


if __name__ == "__main__":
    main()
