"""The ``numba-cuzk`` entry point: the daemon's client commands (`prove --server`,
`status`) go to numba_cuzk.serve.client_cli before anything heavy is imported; every
other command is the CLI's (numba_cuzk.cli, typer and the package)."""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    from numba_cuzk.serve.client_cli import main as client_main, wants_client

    if wants_client(argv):
        sys.exit(client_main(argv))
    from numba_cuzk.cli import app

    app()


if __name__ == "__main__":
    main()
