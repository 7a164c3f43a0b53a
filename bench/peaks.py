"""The peaks the timeline report measures useful work against, fed from the records: the
latest H200 fr_mul and fq_mul of bench/results (any folder under it), written as
numba_cuzk/timeline/peaks.py. tests/test_bench_records.py fails when that table is not
the latest records' (a new bench.field run makes it stale until this is run again).

Usage: python3 -m bench.peaks [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
TABLE = Path(__file__).parent.parent / "numba_cuzk" / "timeline" / "peaks.py"
NAMES = {"fr_mul": "FR_MUL_GPS", "fq_mul": "FQ_MUL_GPS"}
DEVICE = "NVIDIA H200"


def latest(results: Path = RESULTS) -> dict[str, dict]:
    """The latest record of each NAMES figure on DEVICE (by date, then file order)."""
    found: dict[str, tuple] = {}
    for path in sorted(results.rglob("*.json")):
        try:
            records = json.loads(path.read_text())
        except ValueError:
            continue
        for order, rec in enumerate(records if isinstance(records, list) else []):
            if isinstance(rec, dict) and rec.get("name") in NAMES and rec.get("device") == DEVICE:
                key = (rec["date"], path.name, order)
                if rec["name"] not in found or key > found[rec["name"]][0]:
                    found[rec["name"]] = (key, {**rec, "file": path.relative_to(results.parent.parent).as_posix()})
    return {name: rec for name, (_, rec) in found.items()}


def render(records: dict[str, dict]) -> str:
    lines = ['"""Peak field-product rates (G/s) that the report measures useful work against: the',
             "latest H200 records of bench.field, written by bench/peaks.py (do not edit by hand;",
             'tests/test_bench_records.py checks this table against the records)."""', ""]
    for name, constant in NAMES.items():
        r = records[name]
        lines.append(f"{constant} = {r['value']}  # {r['file']}, commit {r['commit']}, {r['date']}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is not the latest records'")
    args = parser.parse_args()
    text = render(latest())
    if args.check:
        sys.exit(0 if TABLE.read_text() == text else 1)
    TABLE.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
