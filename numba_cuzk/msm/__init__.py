"""Multi-scalar multiplication over G1 and G2: Pippenger on the GPU, and a CPU backend.

See pippenger.py for the API and the pipeline, plan.py for the window choice, digits.py
for the scalar encoding, kernels.py for the kernels, cpu.py for the CPU backend.
"""

from numba_cuzk.msm.pippenger import (
    Bases, WindowSums, clear_cache, host_bases, msm, msm_g1, msm_g2, result_shape, to_point, upload_bases,
)

__all__ = ["Bases", "WindowSums", "clear_cache", "host_bases", "msm", "msm_g1", "msm_g2", "result_shape", "to_point",
           "upload_bases"]
