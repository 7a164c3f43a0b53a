"""bench.msm's sppark path without a GPU: the bases and scalars written in sppark's memory
layout, read back by a stand-in for bench/peer/sppark_msm.cu (tests/fake_sppark_msm.py, which
decodes them as sppark's affine_t and fr_t lay them out), its result parsed and equal to the
closed form of bench.msm's bases; its figures as the call-latency records' peer."""

from __future__ import annotations

import stat
import sys

import numpy as np
import pytest

from bench import common, msm_check
from numba_cuzk.curve import layout
from numba_cuzk.curve.params import G1, G2
from tests.msm import inputs


@pytest.fixture
def harness(tmp_path):
    script = tmp_path / "sppark_msm"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -m tests.fake_sppark_msm \"$@\"\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.parametrize("curve", [G1, G2])
def test_sppark_reads_our_inputs_and_its_result_is_the_closed_form(harness, curve):
    n = 6  # bench.msm's bases P_i = T1[i] + T2[0] below 2^12
    t1, t2 = inputs.ark_multiples(curve, n, 101), inputs.ark_multiples(curve, 1, 202)
    bases = layout.points_to_limbs([inputs.ark_to_reference(t1[i] + t2[0], curve) for i in range(n)], curve)
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(3))
    figures = msm_check.sppark_msm(harness, curve, bases, scalars, runs=3)
    assert figures["n"] == n and figures["runs"] == 3
    assert msm_check.sppark_point(figures, curve) == msm_check.closed_form(curve, scalars)
    assert msm_check.sppark_point(figures, curve) != msm_check.closed_form(curve, scalars[:, ::-1].copy())


def test_its_figures_are_the_call_latency_records_peer(monkeypatch):
    monkeypatch.setenv("NUMBA_CUZK_COMMIT", common._git("rev-parse", "--short", "HEAD") or "0000000")
    figures = {"upload_ms": 174.2, "upload_spread_pct": 0.4, "device_ms": 160.1, "device_spread_pct": 0.2,
               "sppark_commit": "17278d74295392f9813f009300b257a688422b7a"}
    peer = msm_check.peer(figures, "upload_ms")
    assert peer == {"name": "sppark 17278d7 msm_t::invoke (same call)", "value": 174.2, "unit": "ms",
                    "spread_pct": 0.4, "timing": common.CALL_LATENCY, "scalars": "host"}
    record = common.record("msm_g2_log20_upload", 40.0, "ms", "dev", {}, peer, timing=common.CALL_LATENCY)
    assert record["peer"]["value"] == 174.2
    with pytest.raises(ValueError, match="cannot have a call-latency peer"):
        common.record("msm_g2_log20", 36.6, "ms", "dev", {}, peer, timing=common.DEVICE_THROUGHPUT)


def test_a_failed_harness_says_why(harness):
    bases = np.zeros((24, 4), dtype=np.uint32)
    with pytest.raises(RuntimeError, match="bytes"):  # 4 bases' worth for n = 5: the harness refuses
        msm_check.sppark_msm(harness, G1, bases, np.zeros((8, 5), dtype=np.uint32), runs=1)
