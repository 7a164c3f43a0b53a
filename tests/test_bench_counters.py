"""bench.counters' arithmetic on synthetic ncu rows and GPM figures: rows grouped by kernel
in launch order, averaged by launch duration, compared point by point."""

from __future__ import annotations

import pytest
from pytest import approx

from bench import counters as bc


def _row(name: str, sm: float, alu: float, ms: float) -> dict:
    return {"ID": "1", "Kernel Name": name, bc.SM_ACTIVE: str(sm), bc.PIPES[0]: str(alu),
            "gpu__time_duration.sum": f"{ms:,.0f}"}


def test_rows_group_by_kernel_and_average_by_duration():
    rows = [_row("gpu_pass_r8", 90, 50, 1000), _row("gpu_pass_r4", 60, 20, 3000),
            _row("cudapy::accumulate_g1", 97, 80, 500), _row("cudapy::accumulate_g2", 95, 70, 800)]
    groups = bc.group_rows(rows, ["ntt_log24", "accumulate_g1", "accumulate_g2"], 1)
    assert [len(groups[n]) for n in ("ntt_log24", "accumulate_g1", "accumulate_g2")] == [2, 1, 1]
    ntt = bc.weighted(groups["ntt_log24"])
    assert ntt[bc.SM_ACTIVE] == approx((90 * 1000 + 60 * 3000) / 4000) and ntt["launches"] == 2
    with pytest.raises(RuntimeError, match="too few launches"):
        bc.group_rows(rows, ["ntt_log24", "accumulate_g1", "accumulate_g2"], 2)


def test_the_differences_and_the_nearest_pipe():
    gpm = {"k": {"sm_active_pct": 96.0, "int_pipe_pct": 60.0}}
    ncu = {"k": {bc.SM_ACTIVE: 93.5, bc.PIPES[0]: 40.0, bc.PIPES[1]: 58.0, "launches": 5}}
    result = bc.compare(gpm, ncu)
    assert result["sm_active_max_diff"] == approx(2.5) and result["pipe_max_diff"] == approx(2.0)
    assert result["kernels"]["k"]["int_pipe_nearest"] == bc.PIPES[1]
