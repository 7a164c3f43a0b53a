"""Test-wide setup: without a GPU, kernels run in Numba's CUDA simulator.

NUMBA_ENABLE_CUDASIM must be set before numba.cuda is first imported, so this decides it
from the presence of an NVIDIA device node rather than by asking Numba.
"""

import os
import warnings

import pytest

if not os.path.exists("/dev/nvidia0") and "NUMBA_ENABLE_CUDASIM" not in os.environ:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

warnings.filterwarnings("ignore", message="overflow encountered", category=RuntimeWarning)

from numba_cuzk import _compat  # noqa: E402,F401  (numba patched before any test imports it)
from numba import config  # noqa: E402

SIMULATOR = bool(config.ENABLE_CUDASIM)

IN_CI = os.environ.get("CI") == "true"  # set by CI services (GitHub, GitLab, ...); .ci/run honours it too


def outside_judge_missing(reason: str) -> None:
    """circom/snarkjs (the outside judge of our files) are not installed: under CI=true the
    test fails, so that CI cannot pass without them; elsewhere it skips, loudly."""
    message = f"circom/snarkjs interop NOT TESTED: {reason}"
    if IN_CI:
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)
