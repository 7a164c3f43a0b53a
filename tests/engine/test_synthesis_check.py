"""The synthesis worker checks and counts the witness it made (synthesis.WitnessCheck), in
the worker: the engine's result thread only maps it."""

import numpy as np
import pytest

from numba_cuzk.engine import ops
from numba_cuzk.engine.synthesis import SynthesisPool, WitnessCheck
from tests.engine.conftest import synthesizer, witness


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_worker_counts_the_witness_it_made(kind, key):
    pool = SynthesisPool(kind, 1)
    try:
        out = pool.submit(synthesizer(3), WitnessCheck(key.n_vars, key.n_public + 1)).result(timeout=120)
        made = out.witness()
        assert np.array_equal(made, witness(3))
        assert out.counts == ops.scalar_counts(witness(3), key.n_public + 1)
        uncounted = pool.submit(synthesizer(3), WitnessCheck(key.n_vars, key.n_public + 1, classes=False))
        assert uncounted.result(timeout=120).counts is None
        with pytest.raises(ValueError, match=r"witness must be a uint32 array of shape \(8, 7\)"):
            pool.submit(synthesizer(3), WitnessCheck(7, 1)).result(timeout=120)
    finally:
        pool.shutdown()


def test_a_given_witness_is_checked_at_submit(key):
    pool = SynthesisPool("thread", 1)
    try:
        bad = witness(1)
        bad[:, 5] = np.uint32(0xFFFFFFFF)  # >= r
        with pytest.raises(ValueError, match="witness wire 5 is not canonical"):
            pool.submit(bad, WitnessCheck(key.n_vars, key.n_public + 1)).result(timeout=0)
    finally:
        pool.shutdown()
