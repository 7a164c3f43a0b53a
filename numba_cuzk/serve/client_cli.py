"""`numba-cuzk prove --server ADDR ...` and `numba-cuzk status [--server ADDR]`, parsed
with argparse and run before the CLI's heavy imports (typer, rich, numba, the kernels):
numba_cuzk.launch sends these here, so a client process starts in a few hundred ms.

``prove`` writes the same proof.json and public.json as a local `numba-cuzk prove` (the
daemon writes them with the same writers; they are written here atomically). Exit
codes as the CLI's: 0 success, 2 a refused request or bad input (one line on stderr
naming the problem), 3 a bug in the daemon (gRPC INTERNAL).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

EXIT_OK, EXIT_REFUSED, EXIT_BUG = 0, 2, 3
DEFAULT = ""  # --server without a value: $NUMBA_CUZK_SERVER or the default socket


def wants_client(argv: list[str]) -> bool:
    """True for the command lines this module answers: `status ...`, and `prove ... --server`."""
    if not argv:
        return False
    if argv[0] == "status":
        return True
    return argv[0] == "prove" and any(a == "--server" or a.startswith("--server=") for a in argv[1:])


def _parser(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"numba-cuzk {command}", exit_on_error=False)
    parser.add_argument("--server", nargs="?", const=DEFAULT, default=DEFAULT,
                        help="The daemon: unix:PATH or HOST:PORT (default: $NUMBA_CUZK_SERVER or the user's socket).")
    parser.add_argument("--token-file", help="A file holding the daemon's token (TCP daemons).")
    parser.add_argument("--timeout", type=float, default=None, help="Give up after this many seconds.")
    parser.add_argument("--json", action="store_true", help="Print the reply as JSON.")
    if command == "prove":
        parser.add_argument("--zkey", required=True, help="The proving key (snarkjs .zkey), read by the daemon.")
        parser.add_argument("--witness", required=True, help="The witness (.wtns), sent to the daemon.")
        parser.add_argument("--proof", default="proof.json", help="Write the proof here (snarkjs's proof.json).")
        parser.add_argument("--public", default="public.json", help="Write the public inputs here (public.json).")
        parser.add_argument("--priority", default="normal", choices=("critical", "high", "normal", "low"))
        parser.add_argument("--key-id", default=None, help="The key's content hash (sha256 of the zkey), if known.")
    return parser


def _fail(message: str, code: int = EXIT_REFUSED) -> int:
    print(f"error: {' '.join(str(message).split())}", file=sys.stderr)
    return code


def main(argv: list[str], started_ns: int | None = None) -> int:
    """Run `prove --server` or `status`; the exit code. ``started_ns``: when the process
    reached Python code (time.monotonic_ns), the first of the steps `prove --json` reports."""
    steps = {"main": started_ns or time.monotonic_ns()}
    command, rest = argv[0], argv[1:]
    try:
        args = _parser(command).parse_args(rest)
    except (argparse.ArgumentError, SystemExit) as exc:
        if isinstance(exc, SystemExit):
            return int(exc.code or 0)  # --help, or argparse's own usage error (exit 2)
        return _fail(str(exc))
    import grpc

    from numba_cuzk.serve import protocol
    from numba_cuzk.serve.client import ProverClient, ServeError

    steps["imported"] = time.monotonic_ns()
    try:
        token = protocol.read_token(args.token_file) if args.token_file else None
        client = ProverClient(args.server or None, token=token, timeout_s=args.timeout)
    except (OSError, ValueError) as exc:
        return _fail(exc)
    try:
        with client:
            return _prove(client, args, steps) if command == "prove" else _status(client, args)
    except ServeError as exc:
        return _fail(exc.details, EXIT_BUG if exc.code == grpc.StatusCode.INTERNAL else EXIT_REFUSED)
    except (OSError, ValueError) as exc:
        return _fail(f"{exc.filename}: {exc.strerror}" if isinstance(exc, OSError) and exc.filename else exc)


def _prove(client, args, steps: dict[str, int]) -> int:
    """The witness sent, the pair written; with --json, ``t_ns``: the monotonic time
    (ns, the clock of the daemon's timeline) at each step: main (Python code reached),
    imported (grpc and the client), sent (witness read, the call made), replied, written."""
    from numba_cuzk.fileio import atomic_files, check_readable, check_writable

    check_readable(args.zkey, "zkey")
    check_readable(args.witness, "witness")
    for path in (args.proof, args.public):
        check_writable(path)
    with open(args.witness, "rb") as f:
        witness = f.read()
    steps["sent"] = time.monotonic_ns()
    reply = client.prove(witness, zkey=args.zkey, key_id=args.key_id, priority=args.priority)
    steps["replied"] = time.monotonic_ns()
    with atomic_files([args.public, args.proof], "w") as (public_file, proof_file):  # both or neither, as prove
        public_file.write(reply.public_json)
        proof_file.write(reply.proof_json)
    steps["written"] = time.monotonic_ns()
    if args.json:
        print(json.dumps({"proof": args.proof, "public": args.public, "job": reply.job_id, "key": reply.key_id,
                          "queued_ms": round(reply.queued_ms, 3), "prove_ms": round(reply.prove_ms, 3),
                          "t_ns": steps}))
    else:
        print(f"wrote {args.proof} and {args.public} (daemon {client.address}, {reply.job_id}: queued "
              f"{reply.queued_ms:.1f} ms, proved in {reply.prove_ms:.1f} ms)")
    return EXIT_OK


def _status(client, args) -> int:
    status = client.status()
    if args.json:
        print(json.dumps(status, indent=2))
        return EXIT_OK
    queue = status["queue"]
    print(f"numba-cuzk serve {status['version']} at {status['address']} (pid {status['pid']}, up "
          f"{status['uptime_s']:.0f} s, {status['backend']} backend): {status['proofs']} proofs, "
          f"{status['failures']} failures, busy {100 * status['busy_last_minute']:.0f}% of the last minute")
    print(f"queue: {queue['running']} running (at most {queue['max_running']}), waiting "
          + ", ".join(f"{n} {p}" for p, n in queue["queued"].items()))
    for key in status["keys"]:
        print(f"key {key['key_id'][:16]} {key['tier']:<4} {key['host_bytes'] / 2**20:8.1f} MiB host "
              f"{key['proofs']:6d} proofs  {key['path']}" + (f"  REFUSED: {key['error']}" if key["error"] else ""))
    for device in status["devices"]:
        print(f"device {device['id']} {device['name']}: {device['resident_keys']} keys resident")
    if status.get("timeline"):
        print(f"timeline (live): {status['timeline']}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) if wants_client(sys.argv[1:]) else _fail("usage: prove --server ... | status"))
