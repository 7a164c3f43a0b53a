"""bench.repeats: repeated runs of one call merge into medians with their spread."""

import json

from bench.repeats import main, merge


def _record(name, value, **params):
    return {"name": name, "value": value, "unit": "ms", "device": "d", "commit": "c", "date": "x",
            "params": {"stat": "median", **params}}


def test_median_spread_and_the_median_runs_details():
    runs = [[_record("a", 10.0, stages=1)], [_record("a", 12.0, stages=2)], [_record("a", 11.0, stages=3)]]
    (a,) = merge(runs, "call")
    assert a["value"] == 11.0 and a["params"]["stages"] == 3  # the run at the median
    assert a["params"]["repeat_medians"] == [10.0, 12.0, 11.0]
    assert a["params"]["spread_pct"] == round(2 / 11 * 100, 2) and a["params"]["call"] == "call"


def test_single_runs_kept_and_order(tmp_path):
    first = tmp_path / "m.json"
    second = tmp_path / "m-2.json"
    first.write_text(json.dumps([_record("b", 1.0), _record("a", 2.0)]))
    second.write_text(json.dumps([_record("a", 4.0)]))
    out = tmp_path / "out.json"
    out.write_text(json.dumps([_record("old", 0.0)]))  # earlier records stay
    main([str(first), str(second), "--topic", "t", "--call", "k", "--out", str(out)])
    records = json.loads(out.read_text())
    assert [r["name"] for r in records] == ["old", "b", "a"]
    assert "repeat_medians" not in records[1]["params"] and records[2]["value"] == 3.0
