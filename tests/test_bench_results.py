"""bench/results: one folder per benchmark and one naming scheme, with the index that
bench/table.py generates (which refuses a file outside the scheme), and no file over
bench/adopt.py's LARGE_BYTES (it gzips a timeline and re-encodes a picture over that)."""

from __future__ import annotations

from bench import adopt, table
from bench.common import RESULTS


def test_the_index_is_what_bench_table_generates():
    assert (RESULTS / "INDEX.md").read_text() == table.index() + "\n", \
        "bench/results/INDEX.md is stale: python3 -m bench.table --index > bench/results/INDEX.md (bench.adopt does it)"


def test_no_result_file_is_large():
    large = {path.relative_to(RESULTS).as_posix(): path.stat().st_size for path in RESULTS.rglob("*")
             if path.is_file() and path.stat().st_size > adopt.LARGE_BYTES}
    assert not large, f"over {adopt.LARGE_BYTES} bytes (gzip or re-encode it, as bench.adopt does): {large}"
