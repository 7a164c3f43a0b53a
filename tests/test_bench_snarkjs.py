"""bench's snarkjs tools on a host that has snarkjs but not circom2 (the H200, given
bench/peer/snarkjs_bundle.sh's bundle): tests/interop/node.NodeTools asked for snarkjs
alone, and bench.snarkjs.prepare refusing to make a circuit it has no compiler for."""

from __future__ import annotations

import json
import shutil

import pytest

from bench import snarkjs
from tests.interop import node


@pytest.fixture
def snarkjs_only(tmp_path, monkeypatch):
    """A node_modules holding snarkjs 0.7.6's package.json and nothing else, node on PATH."""
    modules = tmp_path / "node_modules"
    (modules / "snarkjs").mkdir(parents=True)
    (modules / "snarkjs" / "package.json").write_text(json.dumps({"version": "0.7.6"}))
    monkeypatch.setenv(node.NODE_MODULES_ENV, str(modules))
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    return modules


def test_find_asks_for_the_packages_named(snarkjs_only):
    assert node.NodeTools.find() == (f"circom2, circomlib not installed under {snarkjs_only.resolve()}: "
                                     f"{node.INSTALL_HINT}")
    tools = node.NodeTools.find(("snarkjs",))
    assert tools.has("snarkjs") and not tools.has("circom2")
    assert tools.version("snarkjs") == "0.7.6"


def test_prepare_without_circom2_names_what_is_missing(snarkjs_only, tmp_path):
    tools = node.NodeTools.find(("snarkjs",))
    with pytest.raises(SystemExit, match="no .*chain_log4.wtns, and no circom2 to make it: circom2 is not installed"):
        snarkjs.prepare(4, tmp_path / "log4", tools, gpu=False)
    assert not (tmp_path / "log4" / "chain_log4.circom").exists()  # nothing half made
