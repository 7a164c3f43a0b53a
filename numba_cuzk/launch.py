"""The ``numba-cuzk`` entry point: the daemon's client commands (`prove --server`,
`status`) go to numba_cuzk.serve.client_cli before anything heavy is imported; every
other command is the CLI's (numba_cuzk.cli, typer and the package)."""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    started_ns = time.monotonic_ns()  # the client's --json reports its steps from here
    argv = sys.argv[1:]
    from numba_cuzk.serve.client_cli import main as client_main, wants_client

    if wants_client(argv):
        code = client_main(argv, started_ns)
        sys.stdout.flush()
        sys.stderr.flush()
        # its outputs are written (fsynced) and flushed: skip the interpreter's teardown,
        # where grpc's core shutdown took 60-190 ms of a client process on a loaded 2-core
        # box (3-9 ms with os._exit), longer than the rest of its run after the imports
        os._exit(code)
    from numba_cuzk.cli import app

    app()


if __name__ == "__main__":
    main()
