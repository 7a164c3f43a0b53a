"""Peak field-product rates (G/s) that the report measures useful work against: the
latest H200 records of bench.field, written by bench/peaks.py (do not edit by hand;
tests/test_bench_records.py checks this table against the records)."""

FR_MUL_GPS = 61.7722  # bench/results/field/, commit 54c21b0, 2026-12-02
FQ_MUL_GPS = 27.2725  # bench/results/field/, commit 54c21b0, 2026-12-02
