"""A ``prove`` or ``setup`` through the CLI whose slow part is the write, for the fault
tests (tests/test_faults.py): the prover and the setup are replaced by stand-ins that
answer at once (a fixed proof, the stored test key), and every write goes through a file
object that writes 16 bytes at a time with a pause, like a slow filesystem. Prints
"ready" once imported, so a test can time its SIGKILL into the write.

    python -m tests.fault_driver prove PROOF PUBLIC     # a fixed proof, G and 2G
    python -m tests.fault_driver setup ZKEY VK          # the stored key, --force
    python -m tests.fault_driver ... --fsize BYTES      # RLIMIT_FSIZE: a full disk
    python -m tests.fault_driver ... --kill-at N        # SIGKILL itself at the Nth chunk written
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import signal
import sys
import time

CHUNK_BYTES = 16


CHUNKS = itertools.count(1)


class SlowFile:
    """A file object that writes CHUNK_BYTES at a time, ``pause_s`` apart; the process
    SIGKILLs itself before chunk ``kill_at`` (counted over every file written)."""

    def __init__(self, file, pause_s: float, kill_at: int | None) -> None:
        self._file, self._pause_s, self._kill_at = file, pause_s, kill_at

    def write(self, data):
        text = isinstance(data, str)
        view = memoryview(data.encode() if text else data).cast("B")
        for i in range(0, len(view), CHUNK_BYTES):
            if next(CHUNKS) == self._kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            chunk = view[i:i + CHUNK_BYTES].tobytes()
            self._file.write(chunk.decode("latin-1") if text else chunk)  # the JSON is ASCII
            self._file.flush()  # reach the disk (and RLIMIT_FSIZE) chunk by chunk
            time.sleep(self._pause_s)
        return len(data)

    def __getattr__(self, name):
        return getattr(self._file, name)


def _slow_writes(pause_s: float, kill_at: int | None) -> None:
    from numba_cuzk import fileio

    opened = fileio.AtomicFile.__init__

    def slow_init(self, *args, **kwargs):
        opened(self, *args, **kwargs)
        self.file = SlowFile(self.file, pause_s, kill_at)
    fileio.AtomicFile.__init__ = slow_init


def _fake_prover(proof) -> None:
    import importlib

    prove = importlib.import_module("numba_cuzk.groth16.prove")  # prove_files imports Prover from it as it runs

    class Prover:
        stream = None

        def __init__(self, pk, gpu):
            self.pk = pk

        def prove(self, witness, timer=None):
            return proof

        def public_inputs(self, witness):
            return [int(v) for v in range(1, self.pk.n_public + 1)]
    prove.Prover = Prover


def fixed_proof():
    from numba_cuzk.curve.reference import g1, g2
    from numba_cuzk.groth16.keys import Proof

    return Proof(a=g1.generator, b=g2.generator, c=g1.mul(g1.generator, 2))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["prove", "setup"])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--pause", type=float, default=0.002)
    parser.add_argument("--fsize", type=int, default=None)
    parser.add_argument("--kill-at", type=int, default=None)
    args = parser.parse_args()
    from numba_cuzk.cli import app
    from tests.engine.keys import KEY_CIRCUIT, KEY_LOG, KEY_PATH

    if args.mode == "prove":
        from numba_cuzk.groth16.formats import write_wtns
        from tests.engine.conftest import witness

        _fake_prover(fixed_proof())
        wtns = args.first + ".wtns"
        write_wtns(wtns, witness(1))
        argv = ["prove", "--cpu", "--trusted", "--zkey", str(KEY_PATH), "--witness", wtns, "--proof", args.first,
                "--public", args.second]
    else:
        import importlib

        from numba_cuzk.groth16.formats import read_zkey

        setup = importlib.import_module("numba_cuzk.groth16.setup")  # setup_files imports setup from it as it runs

        setup.setup = lambda r1cs, gpu: read_zkey(KEY_PATH, trusted=True)
        argv = ["setup", "--cpu", "--force", "--circuit", KEY_CIRCUIT, "-k", str(KEY_LOG), "--zkey", args.first,
                "--vk", args.second]
    _slow_writes(args.pause, args.kill_at)
    if args.fsize is not None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (args.fsize, args.fsize))
    print("ready", flush=True)
    sys.argv = ["numba-cuzk", *argv]
    app()


if __name__ == "__main__":
    main()
