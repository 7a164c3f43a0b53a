"""The daemon's Prometheus metrics (prometheus-client), in a registry of its own: served by
GetMetrics and, with ``--metrics-port``, over HTTP."""

from __future__ import annotations

from typing import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, start_http_server

# proof latency from arrival to answer, seconds: 2^10 on a GPU (~20 ms) .. 2^24 on a CPU (minutes)
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class Metrics:
    """Counters and gauges of one daemon; ``busy`` and ``depth`` are read at scrape time."""

    def __init__(self, busy: Callable[[], float], depth: Callable[[], int], running: Callable[[], int]) -> None:
        self.registry = registry = CollectorRegistry()
        self.proofs = Counter("numba_cuzk_proofs", "Proofs answered", ["priority"], registry=registry)
        self.failures = Counter("numba_cuzk_failures", "Jobs that failed, by reason", ["reason"], registry=registry)
        self.latency = Histogram("numba_cuzk_proof_latency_seconds", "Arrival to answer of a proved job",
                                 buckets=LATENCY_BUCKETS, registry=registry)
        Gauge("numba_cuzk_queue_depth", "Jobs waiting for the engine", registry=registry).set_function(depth)
        Gauge("numba_cuzk_jobs_running", "Jobs in the engine", registry=registry).set_function(running)
        Gauge("numba_cuzk_device_busy_ratio", "Fraction of the last minute with a proof in the engine",
              registry=registry).set_function(busy)

    def text(self) -> str:
        return generate_latest(self.registry).decode()

    def serve_http(self, port: int) -> None:
        """Serve /metrics on ``port`` (all interfaces, prometheus-client's thread)."""
        start_http_server(port, registry=self.registry)
