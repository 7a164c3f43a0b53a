"""``numba-cuzk serve``: a proving daemon on gRPC with proving keys resident (cuzk's model).

    protocol.py          addresses, token, priorities; proving.proto and its generated modules
    wire.py              proving.proto's messages as bytes, without protobuf (both sides)
    client.py            ProverClient: the Python client (no engine, no numba)
    client_cli.py        `numba-cuzk prove --server` and `status --server`, before any heavy import
    keys.py              KeyStore: keys by content hash, hot/warm/cold tiers, LRU budgets
    jobs.py              the daemon's priority queue of jobs in front of the Engine
    server.py            the gRPC servicer and `serve()` (imports the engine)
    metrics.py           Prometheus metrics

Nothing is imported here: ``import numba_cuzk.serve.client`` must stay light.
"""
