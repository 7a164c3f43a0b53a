"""A client process stays light: `numba-cuzk prove --server` and `status` (numba_cuzk.launch
-> serve.client_cli -> serve.client) load no numba, numpy, typer or rich, and no protobuf
(serve/wire.py writes and reads the messages; tests/test_imports.py checks numba alone,
module by module)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("numba", "numpy", "typer", "rich", "llvmlite", "google")  # google: protobuf


def test_the_client_path_loads_no_heavy_module():
    code = ("import json, sys\nimport numba_cuzk.launch, numba_cuzk.serve.client_cli, numba_cuzk.serve.client\n"
            "from numba_cuzk.serve.client_cli import wants_client\n"
            "assert wants_client(['prove', '--zkey', 'z', '--server', 'unix:/x']) and wants_client(['status'])\n"
            "from numba_cuzk.fileio import atomic_files, check_readable, check_writable\n"
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    heavy = [m for m in loaded if m.split(".")[0] in HEAVY]
    assert not heavy, f"the client path loads {heavy[:8]}"


def test_other_commands_are_the_clis():
    from numba_cuzk.serve.client_cli import wants_client

    assert not wants_client(["prove", "--zkey", "z", "--witness", "w"])  # a local prove
    assert not wants_client(["serve", "--listen", "unix:/x"]) and not wants_client([])
