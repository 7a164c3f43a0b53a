"""bench.msm --plans-only end to end at a tiny size (the simulator, or a GPU with -m gpu), so
that its device call cannot fail on a name: bases built as on the device, the default plan
and plan variants (window, scatter, registers together) checked against the closed form,
timed and written as device-throughput records with their spread and stages; a variant
whose result is wrong is refused before it is timed."""

import json
import time

import numpy as np
import pytest

from bench import common
from bench import msm as bench_msm
from numba_cuzk.msm import pippenger
from tests.conftest import SIMULATOR

pytestmark = pytest.mark.gpu
LOG_N = 3  # 8 scalars: 2 s of simulated kernels per MSM call


@pytest.fixture
def records_env(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CUZK_COMMIT", common._git("rev-parse", "--short", "HEAD") or "0000000")
    if SIMULATOR:  # no timing events there: wall time stands in for the device's
        def wall_ms(launch, runs=7, warmup=2):
            for _ in range(warmup):
                launch()
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                launch()
                times.append((time.perf_counter() - t0) * 1e3)
            return times

        monkeypatch.setattr(common, "device_time_ms", wall_ms)
    return tmp_path / "msm.json"


def test_plans_only_writes_checked_records(records_env):
    bench_msm.main(["--g1", str(LOG_N), "--g2", "", "--runs", "2", "--plans-only", "--out", str(records_env),
                    "--variant", "window=4,scatter=1,registers=128", "--variant", "window=5",
                    "--variant", "window=5,affine=4"])
    records = {r["name"]: r for r in json.loads(records_env.read_text())}
    names = [f"msm_g1_log{LOG_N}", f"msm_g1_log{LOG_N}_window4_scatter1_registers128", f"msm_g1_log{LOG_N}_window5",
             f"msm_g1_log{LOG_N}_window5_affine4"]
    assert sorted(records) == sorted(names)
    capped = records[names[1]]["params"]
    assert (capped["window"], capped["scatter_windows"], capped["registers"]) == (4, 1, 128)
    assert records[names[3]]["params"]["affine"] == 4 and capped["affine"] is None
    for record in records.values():
        params = record["params"]
        assert params["timing"] == common.DEVICE_THROUGHPUT and params["checked"].startswith("closed form")
        assert len(params["runs_ms"]) == 2 and params["spread_pct"] >= 0
        assert set(params["stages_ms"]) == set(pippenger.STAGES)


def test_a_wrong_variant_is_refused_before_timing(records_env, monkeypatch):
    msm = pippenger.msm

    def wrong_with_window4(bases, scalars, **options):  # the window-4 plan's sums zeroed: a wrong result
        result = msm(bases, scalars, **options)
        if options.get("window") == 4:
            result.sums[:] = np.zeros(result.sums.shape, dtype=np.uint32)
        return result

    monkeypatch.setattr(bench_msm, "msm", wrong_with_window4)
    with pytest.raises(AssertionError, match="window4: the result differs from the closed form"):
        bench_msm.main(["--g1", str(LOG_N), "--g2", "", "--runs", "1", "--plans-only", "--out", str(records_env),
                        "--variant", "window=4"])
    assert not records_env.exists()  # a size's records are written once all its plans passed


def test_variant_specs():
    assert bench_msm.parse_variant("window=20,scatter=1") == {"window": 20, "scatter": 1}
    assert bench_msm.variant_name({"window": 20, "scatter": 1}) == "window20_scatter1"
    for bad in ("threads=64", "window=20,window=21", "window=", "scatter"):
        with pytest.raises(SystemExit):
            bench_msm.parse_variant(bad)
