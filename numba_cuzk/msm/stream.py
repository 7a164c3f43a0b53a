"""An MSM whose bases stay in pinned host memory and stream through the GPU in chunks.

    streamed = StreamedBases(points, G2, chunk=1 << 22)   # pins points, two device buffers
    streamed.prefetch(copy_stream)                         # chunk 0 (and 1) on their way
    result = streamed.msm(scalars, workspace, out, stream, copy_stream)   # WindowSums

Window sums are additive over chunks of bases: with one window width c for every chunk,
sum_i k_i P_i = sum_chunks sum_w 2^(c w) S_(chunk, w). So chunk p's MSM (``msm`` on a
Workspace of ``chunk`` scalars: one c) writes out[p], and the result is a WindowSums of
(parts, 4L, windows) sums that ``to_point`` adds up by window before Horner's rule.

Double buffering, two device buffers of (2L, chunk) and two events per buffer:
``uploaded[b]`` (copy stream, after chunk k's copy into buffer b = k mod 2) and
``freed[b]`` (compute stream, after chunk k's MSM). The compute stream waits for
uploaded[b] before chunk k's MSM, the copy stream for freed[b] before copying chunk k + 2:
chunk k + 1 uploads while chunk k computes. The host points are point-major
(curve/point_major.py, as the MSM reads its bases), so a chunk is one contiguous copy.
The copy of a chunk of G2 points takes ~chunk * 192 B / 52.8 GB/s on the H200 (pinned:
~61 ms at 2^24), about what its MSM takes there; at 2^27 stream_b2's copies,
468 ms, overlapped msm_b2's 890 ms.

``transfer`` (optional): a callable giving a context manager that brackets each chunk's
copy launches with events on the copy stream (the prover's PhaseTimer.phase), so that a
timeline shows the transfers.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Callable, ContextManager

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda

from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.point_major import is_point_major, point_major
from numba_cuzk.field.target import sync_event
from numba_cuzk.msm.pippenger import Bases, Workspace, WindowSums, _check_points, msm


def _page_locked(points: np.ndarray) -> bool:
    """Whether ``points`` lies in memory cuda.pinned_array allocated (resident setup's
    streamed queries): locked already, and registering it again is CUDA_ERROR_INVALID_VALUE."""
    from numba.cuda.cudadrv import driver

    owner = points
    while isinstance(owner, np.ndarray):
        owner = owner.base
    return isinstance(owner, driver.PinnedMemory)


class StreamedBases:
    """``points`` ((2L, m) uint32 affine, host) streamed through two device buffers of
    ``chunk`` = min(chunk, m) points each (one if m <= chunk), in ``parts`` =
    ceil(m / chunk) chunks. Point-major points (setup's streamed queries) are pinned in
    place unless already pinned, not copied; C-ordered ones are copied once into pinned
    point-major memory (as much host memory again)."""

    def __init__(self, points: np.ndarray, curve: CurveParams, chunk: int) -> None:
        _check_points(points, curve)
        if not isinstance(points, np.ndarray):
            raise ValueError("streamed bases must be a host array (they are pinned)")
        if chunk < 1:
            raise ValueError(f"chunk must be >= 1 point, got {chunk}")
        if not is_point_major(points):
            points = point_major(points, out=cuda.pinned_array(points.shape, dtype=np.uint32, order="F"))
        self.curve, self.points = curve, points
        self.count = int(points.shape[1])
        self.chunk = max(1, min(chunk, self.count))  # points per buffer
        self.parts = max(1, -(-self.count // self.chunk))
        self._pin = None if config.ENABLE_CUDASIM or not points.size or _page_locked(points) else (
            cuda.current_context().mempin(points, points.ctypes.data, points.nbytes))  # held: locked while self lives
        buffers = min(2, self.parts)
        self.buffers = [cuda.device_array((2 * curve.limbs, self.chunk), dtype=np.uint32, order="F")
                        for _ in range(buffers)]
        self.uploaded = [sync_event() for _ in range(buffers)]
        self.freed = [sync_event() for _ in range(buffers)]
        self._next = 0  # the next chunk to upload in the current pass

    def result_shape(self, windows: int) -> tuple[int, int, int]:
        """Shape of ``msm``'s ``out``: (parts, 4L, windows)."""
        return self.parts, 4 * self.curve.limbs, windows

    def prefetch(self, copy_stream, transfer: Callable[[], ContextManager] | None = None) -> None:
        """Queue the first chunks' uploads (one per buffer) on ``copy_stream``, behind the
        previous pass's MSMs on those buffers: call it early, so they overlap other work."""
        self._next = 0
        while self._next < min(len(self.buffers), self.parts):
            self._upload(self._next, copy_stream, transfer)

    def msm(self, scalars, workspace: Workspace, out, stream, copy_stream, *, montgomery: bool = False,
            transfer: Callable[[], ContextManager] | None = None) -> WindowSums:
        """sum_i scalars[i] * points[i] (scalars: (8, count) device, n = count) as WindowSums
        with sums = ``out`` ((parts, 4L, windows) device, windows of ``workspace``'s plan,
        which serves ``chunk`` scalars). Uploads the chunks ``prefetch`` did not."""
        n = int(scalars.shape[1])
        if n != self.count:
            raise ValueError(f"{n} scalars for {self.count} streamed bases")
        if workspace.plan.n < self.chunk:
            raise ValueError(f"the workspace serves {workspace.plan.n} scalars, a chunk has {self.chunk}")
        if tuple(out.shape) != self.result_shape(workspace.plan.windows):
            raise ValueError(f"out must be {self.result_shape(workspace.plan.windows)}, got {tuple(out.shape)}")
        if self._next == 0:
            self.prefetch(copy_stream, transfer)
        for p in range(self.parts):
            b = p % len(self.buffers)
            lo, hi = p * self.chunk, min((p + 1) * self.chunk, self.count)
            self.uploaded[b].wait(stream)
            msm(Bases(self.curve, self.buffers[b]), scalars[:, lo:hi], montgomery=montgomery, out=out[p],
                stream=stream, workspace=workspace)
            self.freed[b].record(stream)
            if self._next < self.parts:
                self._upload(self._next, copy_stream, transfer)
        self._next = 0
        return WindowSums(self.curve, workspace.plan.c, out)

    def _upload(self, p: int, copy_stream, transfer) -> None:
        b = p % len(self.buffers)
        lo, hi = p * self.chunk, min((p + 1) * self.chunk, self.count)
        self.freed[b].wait(copy_stream)
        with (transfer or nullcontext)():
            if hi > lo:
                self.buffers[b][:, :hi - lo].copy_to_device(self.points[:, lo:hi], stream=copy_stream)
        self.uploaded[b].record(copy_stream)
        self._next = p + 1


