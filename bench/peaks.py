"""The peaks the timeline report measures useful work against, fed from the records: the
latest H200 fr_mul and fq_mul of bench/results (bench.table's latest), written as
numba_cuzk/timeline/peaks.py. tests/test_bench_records.py fails when that table is not
the latest records' (a new bench.field run makes it stale until this is run again).

Usage: python3 -m bench.peaks [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

TABLE = Path(__file__).parent.parent / "numba_cuzk" / "timeline" / "peaks.py"
NAMES = {"fr_mul": "FR_MUL_GPS", "fq_mul": "FQ_MUL_GPS"}
DEVICE = "NVIDIA H200"


def latest() -> dict[str, dict]:
    """The latest record of each NAMES figure on DEVICE, in bench.table's order (date, time,
    the commit's place in git's history, file, position)."""
    from bench.table import records_in_order

    return {rec["name"]: rec for rec in records_in_order() if rec["name"] in NAMES and rec.get("device") == DEVICE}


def render(records: dict[str, dict]) -> str:
    lines = ['"""Peak field-product rates (G/s) that the report measures useful work against: the',
             "latest H200 records of bench.field, written by bench/peaks.py (do not edit by hand;",
             'tests/test_bench_records.py checks this table against the records)."""', ""]
    for name, constant in NAMES.items():
        r = records[name]
        lines.append(f"{constant} = {r['value']}  # bench/results/field/, commit {r['commit']}, {r['date']}")
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
