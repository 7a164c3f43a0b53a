"""bench.counters without a GPU: ncu's log in its real layout (tests/fake_ncu.py) parsed,
rows grouped by kernel in launch order and averaged by duration, compared point by point
with GPM; and the whole benchmark run end to end against the simulated GPM
(tests/engine/fake_nvml.py) and the stand-in ncu, its retry with the core metrics too."""

from __future__ import annotations

import json
import stat
import sys
import time

import pytest
from pytest import approx

from bench import common
from bench import counters as bc
from numba_cuzk.engine import counters
from tests import fake_ncu
from tests.engine.fake_nvml import FakeGpm, loader

NAMES = ["ntt_log24", "accumulate_g1", "accumulate_g2"]


def test_the_log_parses_past_ncus_own_lines_and_the_units_row():
    rows = bc.raw_rows(fake_ncu.render_log([bc.SM_ACTIVE, bc.PIPES[0], bc.DURATION], launches=2))
    assert len(rows) == 2 * 5 and [r["ID"] for r in rows] == [str(k) for k in range(10)]
    assert rows[0]["Kernel Name"].startswith("gpu_pass_radix8") and rows[0][bc.DURATION] == "1,340.00"
    with pytest.raises(RuntimeError, match="no CSV in ncu's log"):
        bc.raw_rows("==PROF== Connected to process 1\n==ERROR== Failed to find metric x\n")


def test_rows_group_by_kernel_and_average_by_duration():
    rows = bc.raw_rows(fake_ncu.render_log([bc.SM_ACTIVE, *bc.PIPES, *bc.EXTRA, bc.DURATION], launches=3))
    groups = bc.group_rows(rows, NAMES, 3)
    assert [len(groups[n]) for n in NAMES] == [9, 3, 3]  # an NTT is three pass kernels
    for name, group in zip(NAMES, ("ntt", "accumulate_g1", "accumulate_g2")):
        figures = bc.weighted(groups[name])
        assert figures["launches"] == len(groups[name])
        for metric in (bc.SM_ACTIVE, *bc.PIPES, *bc.EXTRA):
            assert figures[metric] == approx(fake_ncu.expected(group, metric), abs=0.01)
    with pytest.raises(RuntimeError, match="too few launches"):
        bc.group_rows(rows, NAMES, 4)


def test_the_differences_and_the_nearest_pipe():
    gpm = {"k": {"sm_active_pct": 96.0, "int_pipe_pct": 60.0}}
    ncu = {"k": {bc.SM_ACTIVE: 93.5, bc.PIPES[0]: 40.0, bc.PIPES[1]: 58.0, "launches": 5}}
    result = bc.compare(gpm, ncu)
    assert result["sm_active_max_diff"] == approx(2.5) and result["pipe_max_diff"] == approx(2.0)
    assert result["kernels"]["k"]["int_pipe_nearest"] == bc.PIPES[1]
    with pytest.raises(RuntimeError, match="no SM-active figure from GPM"):
        bc.compare({"k": {"sm_active_pct": None}}, ncu)


def test_the_integer_pipes_summed_and_capped_as_one_candidate():
    """The H200's NTT pass (2026-12-04): ALU 44.08 + FMA-heavy 69.26 cycles, capped at 100,
    against GPM's 100.0; accumulate_g1's 20.09 + 73.31 against 85.73."""
    gpm = {"ntt": {"sm_active_pct": 98.57, "int_pipe_pct": 100.0},
           "g1": {"sm_active_pct": 90.14, "int_pipe_pct": 85.73}}
    ncu = {"ntt": {bc.SM_ACTIVE: 99.47, bc.PIPES[3]: 44.08, bc.PIPES[5]: 69.26},
           "g1": {bc.SM_ACTIVE: 92.95, bc.PIPES[3]: 20.09, bc.PIPES[5]: 73.31}}
    result = bc.compare(gpm, ncu)
    assert {k["int_pipe_nearest"] for k in result["kernels"].values()} == {bc.INTEGER_PIPES}
    assert result["kernels"]["ntt"]["int_pipe_diff"][bc.INTEGER_PIPES] == 0.0
    assert result["pipe_max_diff"] == approx(93.40 - 85.73)
    alone = bc.compare(gpm, {k: {bc.SM_ACTIVE: 90.0} for k in gpm})  # no pipe figures from ncu
    assert bc.INTEGER_PIPES not in alone["kernels"]["g1"]["int_pipe_diff"]


@pytest.fixture
def ncu(tmp_path, monkeypatch):
    """The stand-in ncu as an executable; its argv lands in the returned file, one JSON line each."""
    script = tmp_path / "ncu"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -m tests.fake_ncu \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    calls = tmp_path / "ncu-args.jsonl"
    monkeypatch.setenv("FAKE_NCU_ARGS", str(calls))
    return script, calls


def test_metrics_the_query_does_not_list_are_left_out(ncu):
    script, _ = ncu
    known = bc.known_metrics(str(script), (bc.SM_ACTIVE, *bc.PIPES, bc.DURATION))
    assert known == [bc.SM_ACTIVE, *bc.PIPES[:-1], bc.DURATION]  # sm__issue_active: not in the listing
    assert bc.known_metrics("/nonexistent/ncu", (bc.SM_ACTIVE, bc.DURATION)) == [bc.SM_ACTIVE, bc.DURATION]


@pytest.mark.parametrize("fail_first", [False, True])
def test_the_benchmark_end_to_end(tmp_path, monkeypatch, ncu, fail_first):
    """main() with three stand-in kernels, the simulated GPM busy all along and the stand-in
    ncu: the records, and the child command that ncu would profile."""
    script, calls = ncu
    if fail_first:
        monkeypatch.setenv("FAKE_NCU_FAIL_FIRST", str(tmp_path / "failed"))
    monkeypatch.setenv("NUMBA_CUZK_COMMIT", common._git("rev-parse", "--short", "HEAD") or "0000000")
    monkeypatch.setattr(bc, "kernels", lambda ntt_log, bases_log: {n: lambda: time.sleep(0.002) for n in NAMES})
    monkeypatch.setattr(counters, "_load_nvml", loader(FakeGpm(busy=(0, 1 << 62)), monkeypatch))
    out = tmp_path / "counters.json"
    bc.main(["--ncu", str(script), "--seconds", "0.8", "--ncu-launches", "2", "--out", str(out)])
    records = {r["name"]: r for r in json.loads(out.read_text())}
    assert set(records) == {"counters_vs_ncu_max_diff", "counters_vs_ncu_pipe_max_diff"}
    kernels = records["counters_vs_ncu_max_diff"]["params"]["kernels"]
    assert kernels["accumulate_g1"]["gpm"]["sm_active_pct"] == 100.0  # the simulated GPM: busy throughout
    assert kernels["accumulate_g1"]["ncu"][bc.SM_ACTIVE] == approx(98.5)
    assert records["counters_vs_ncu_max_diff"]["value"] == approx(100.0 - fake_ncu.expected("ntt", bc.SM_ACTIVE),
                                                                  abs=0.01)
    assert all(r["params"]["timing"] == common.DEVICE_THROUGHPUT for r in records.values())
    profiled = [json.loads(line) for line in calls.read_text().splitlines() if "--csv" in line]
    assert len(profiled) == (2 if fail_first else 1)
    argv = profiled[-1]
    assert argv[argv.index("--profile-from-start") + 1] == "off" and argv[argv.index("--clock-control") + 1] == "none"
    assert argv[argv.index(sys.executable):] == [sys.executable, "-m", "bench.counters", "--ncu-child",
                                                 "--ncu-launches", "2", "--ntt-log", "24", "--bases-log", "20"]
    if fail_first:  # the retry asks for the core metrics alone
        assert argv[argv.index("--metrics") + 1].split(",") == list(bc.CORE)


def test_the_engines_counter_records_from_a_sampled_timeline(tmp_path, monkeypatch):
    """bench.engine's records of a sampled run (the synthetic streams of tests/timeline/
    test_stack.py, three rounds alike): the traced figures without an untraced run
    (--traced-only), the stack's figures, the sentences in params, the overhead against the
    unsampled twin, and all of it written as JSON."""
    from bench import engine
    from numba_cuzk.engine import EngineConfig
    from numba_cuzk.timeline.reader import read
    from tests.timeline import test_stack

    monkeypatch.setenv("NUMBA_CUZK_COMMIT", common._git("rev-parse", "--short", "HEAD") or "0000000")
    path = tmp_path / "t.jsonl"
    test_stack.write(path)
    rounds = [(s, read(path)) for s in (0.50, 0.49, 0.51)]
    config = EngineConfig(devices=(), gpu_workers_per_device=2, trace="kernels,counters")
    traced = [r["name"] for r in engine.traced_records(rounds, None, config, {"circuit": "x"}, "dev")]
    assert traced == ["engine_device_busy_kernels_gw2", "engine_s_per_proof_traced_gw2"]  # --traced-only: no overhead
    records = {r["name"]: r for r in engine.counter_records(rounds, 0.495, config, {"circuit": "x"}, "dev")}
    assert set(records) == {"engine_sm_active_gw2", "engine_pipe_util_gw2", "counters_overhead_pct"}
    window = records["engine_sm_active_gw2"]["params"]["stack"]["window"]
    assert records["engine_sm_active_gw2"]["value"] == approx(window["sm_active_pct"], abs=1e-3)
    assert records["engine_pipe_util_gw2"]["params"]["pipe"] == "integer"
    assert records["counters_overhead_pct"]["value"] == approx(100 * (0.50 / 0.495 - 1), abs=1e-4)
    sentences = records["engine_sm_active_gw2"]["params"]["stack"]["sentences"]
    assert sentences[0].startswith("1. Host brackets") and sentences[-1].startswith("Kernel busy")
    assert all(r["params"]["timing"] == common.CALL_LATENCY for r in records.values())
    common.write(list(records.values()), "engine", str(tmp_path / "engine.json"))
    assert len(json.loads((tmp_path / "engine.json").read_text())) == 3
