"""Multi-scalar multiplication over G1 and G2: Pippenger on the GPU, and a CPU backend.

See pippenger.py for the API and the pipeline, plan.py for the window choice, digits.py
for the scalar encoding, kernels.py for the kernels, cpu.py for the CPU backend,
stream.py for an MSM whose bases stream from pinned host memory in chunks.
"""

from numba_cuzk.msm.pippenger import (
    Bases, WindowSums, Workspace, clear_cache, host_bases, msm, msm_g1, msm_g2, result_shape, to_point, upload_bases,
    workspace_bytes,
)
from numba_cuzk.msm.stream import StreamedBases

__all__ = ["Bases", "StreamedBases", "WindowSums", "Workspace", "clear_cache", "host_bases", "msm", "msm_g1",
           "msm_g2", "result_shape", "to_point", "upload_bases", "workspace_bytes"]
