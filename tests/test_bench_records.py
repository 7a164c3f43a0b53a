"""The benchmark records compare like with like: every record written from 2026-12-04 on
says how it was timed and names a real commit; every writer passes a timing; the report's
peaks are the latest records'; the MSM's closed-form check agrees with arkworks."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bench import common, peaks

ROOT = Path(__file__).parent.parent
SINCE = "2026-12-04"  # records before this day predate params.timing


def _records() -> list[tuple[Path, dict]]:
    found = []
    for path in sorted((ROOT / "bench" / "results").rglob("*.json")):
        data = json.loads(path.read_text())
        found += [(path, r) for r in (data if isinstance(data, list) else []) if isinstance(r, dict)]
    return found


def _history() -> bool:
    """Whether the whole git history is here (a shallow clone lacks the commits measured)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return False
    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True,
                             text=True).stdout.strip()
    return shallow == "false"


def untimed(records: list[tuple[Path, dict]]) -> list[str]:
    """The records dated SINCE or later without a params.timing of common.TIMINGS."""
    return [f"{p.name}: {r['name']}" for p, r in records if str(r.get("date", "")) >= SINCE
            and r.get("params", {}).get("timing") not in common.TIMINGS]


def unknown_commits(records: list[tuple[Path, dict]]) -> list[str]:
    """The commit fields of records dated SINCE or later that are not commits of the repository."""
    commits = {str(r.get("commit")) for _, r in records if str(r.get("date", "")) >= SINCE}
    return sorted(c for c in commits if subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{c}^{{commit}}"],
                                                       capture_output=True).returncode)


def test_every_new_record_has_a_timing():
    assert not untimed(_records()), f"records without params.timing: {untimed(_records())[:10]}"


@pytest.mark.skipif(not _history(), reason="needs the whole git history")
def test_every_new_record_names_a_real_commit():
    assert not unknown_commits(_records()), f"record commits that are not commits: {unknown_commits(_records())}"


@pytest.mark.skipif(not _history(), reason="needs the whole git history")
def test_the_record_checks_catch_the_audits_findings():
    path = Path("x.json")
    old = {"name": "a", "date": "2026-12-03", "commit": "ccaf80b+const", "params": {}}  # before SINCE: not judged
    bad = {"name": "b", "date": "2026-12-04", "commit": "07f8747+fixed", "params": {}}
    good = {"name": "c", "date": "2026-12-05", "commit": "89604c3", "params": {"timing": "call-latency"}}
    records = [(path, old), (path, bad), (path, good)]
    assert untimed(records) == ["x.json: b"] and unknown_commits(records) == ["07f8747+fixed"]


def test_every_record_call_in_bench_passes_a_timing():
    missing = []
    for path in sorted((ROOT / "bench").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "record" \
                    and path.name != "common.py" and not any(k.arg == "timing" for k in node.keywords):
                if isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") != "common":
                    continue  # cuda events' .record()
                missing.append(f"{path.name}:{node.lineno}")
    assert not missing, f"common.record without timing=: {missing}"


def test_record_refuses_a_missing_timing_or_a_peer_timed_otherwise(monkeypatch):
    monkeypatch.setenv("NUMBA_CUZK_COMMIT", "89604c3")
    rec = common.record("x", 1.0, "ms", "dev", {"runs": 3}, timing=common.CALL_LATENCY)
    assert rec["params"] == {"runs": 3, "timing": "call-latency"} and rec["commit"] == "89604c3"
    with pytest.raises(ValueError, match="timing must be one of"):
        common.record("x", 1.0, "ms", "dev", timing="wall")
    with pytest.raises(ValueError, match="cannot have a device-throughput peer"):
        common.record("x", 1.0, "ms", "dev", peer={"name": "p", "value": 1, "timing": common.DEVICE_THROUGHPUT},
                      timing=common.CALL_LATENCY)


@pytest.mark.parametrize("named", ["ccaf80b+const", "07f8747+fixed", "unknown"])
def test_a_commit_that_is_not_a_hash_is_refused(monkeypatch, named):
    monkeypatch.setenv("NUMBA_CUZK_COMMIT", named)
    with pytest.raises(common.DirtyTree, match="not a commit hash"):
        common.commit()


@pytest.mark.skipif(not _history(), reason="bench.table orders a day's records by git's history")
def test_the_reports_peaks_are_the_latest_field_records():
    assert (ROOT / "numba_cuzk" / "timeline" / "peaks.py").read_text() == peaks.render(peaks.latest()), \
        "numba_cuzk/timeline/peaks.py is stale: run python3 -m bench.peaks"


def test_the_closed_form_is_the_msm_of_the_bench_bases():
    from bench import msm_check
    from numba_cuzk.curve.params import G1
    from tests.msm import inputs

    n = 1 << 13  # two T2 rows: i >> 12 takes 0 and 1
    t1, t2 = inputs.ark_multiples(G1, 1 << 12, 101), inputs.ark_multiples(G1, 2, 202)
    points = [t1[i & 4095] + t2[i >> 12] for i in range(n)]
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(7))
    want = inputs.ark_to_reference(inputs.ark_msm(points, scalars, G1), G1)
    assert msm_check.closed_form(G1, scalars) == want
    assert msm_check.check(G1, 13, scalars, want).startswith("closed form")
    with pytest.raises(AssertionError, match="differs from the closed form"):
        msm_check.check(G1, 13, scalars, inputs.ark_to_reference(t1[0], G1))


def test_a_cpu_record_names_its_fq_product(monkeypatch):
    """CPU figures move with the Fq product the process bound (field/adx.py): a CPU record
    says which, a GPU record does not."""
    from numba_cuzk.field import adx

    monkeypatch.setattr(common, "commit", lambda: "abc1234")
    monkeypatch.setattr(common, "dirty", lambda: False)
    cpu = common.record("x_cpu", 1.0, "ms", "cpu:AMD EPYC x2", timing=common.TIMINGS[0])
    gpu = common.record("x", 1.0, "ms", "NVIDIA H200", timing=common.TIMINGS[0])
    assert cpu["params"]["fq_product"] == ("adx" if adx.available() else "llvm")
    assert "fq_product" not in gpu["params"]
