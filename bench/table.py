"""Print the README's benchmark table: the latest record of each name in bench/results/.

Usage: python3 -m bench.table
"""

from __future__ import annotations

import json

from bench.common import RESULTS


def latest_records() -> list[dict]:
    latest: dict[str, dict] = {}
    for path in sorted(RESULTS.glob("*.json")):  # file names sort by date
        for rec in json.loads(path.read_text()):
            latest[rec["name"]] = rec  # later runs of a day come later in its file
    return sorted(latest.values(), key=lambda r: r["name"])


def main() -> None:
    print("| name | value | unit | device | peer | commit | date |")
    print("| --- | ---: | --- | --- | --- | --- | --- |")
    for r in latest_records():
        peer = f"{r['peer']['name']}: {r['peer']['value']} {r['peer']['unit']}" if "peer" in r else ""
        print(f"| {r['name']} | {r['value']:.4g} | {r['unit']} | {r['device']} | {peer} | {r['commit']} | {r['date']} |")


if __name__ == "__main__":
    main()
