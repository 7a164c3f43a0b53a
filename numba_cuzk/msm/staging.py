"""Host scalars to the GPU through pinned memory, piece by piece, copied on all cores.

A copy from pageable memory is staged by the driver on one host thread: 2^24 scalars
(512 MiB) took ~62 ms of msm_g1_log24_upload's 294.5 ms on the H200 (8.3 GB/s). Here each
piece of ``PIECE`` words is copied by all cores into one of two pinned buffers, and its
DMA (asynchronous: the buffer is pinned) runs while the next piece is copied into the
other buffer, so the upload takes about the host copy's time, whichever is longer.

    stage(device_scalars, host_scalars, stream)   # returns once the last piece is queued

Each buffer's event says when its DMA is done; a piece waits for it before reusing the
buffer, so the host may return before the last two DMAs end (they are on ``stream``,
ahead of the MSM's kernels). One Staging per GPU, used under its lock.
"""

from __future__ import annotations

import threading

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda, prange

from numba_cuzk.field.target import sync_event
from numba_cuzk.kernel_cache import cpu_kernel

PIECE = 1 << 22  # words per piece (16 MiB): ~0.3 ms of DMA on the H200, 32 pieces at 2^24
_RUN = 1 << 15  # words per parallel run of the host copy


class Staging:
    """Two pinned buffers of PIECE uint32 words and the events of their last DMA."""

    def __init__(self) -> None:
        self.buffers = [cuda.pinned_array(PIECE, dtype=np.uint32) for _ in range(2)]
        self.copied = [sync_event(), sync_event()]
        self.used = [False, False]
        self.lock = threading.Lock()

    def upload(self, device, host: np.ndarray, stream) -> None:
        """device (C-contiguous device array) <- host (same shape, uint32), on ``stream``."""
        src = np.ascontiguousarray(host).reshape(-1)
        dst = device.reshape(-1)
        with self.lock:
            for p, lo in enumerate(range(0, src.size, PIECE)):
                b, count = p % 2, min(PIECE, src.size - lo)
                if self.used[b]:
                    self.copied[b].synchronize()  # its previous piece is on the device
                copy_words(self.buffers[b], src, lo, count)
                dst[lo:lo + count].copy_to_device(self.buffers[b][:count], stream=stream)
                self.copied[b].record(stream)
                self.used[b] = True


_staging: dict = {}


def stage(device, host: np.ndarray, stream) -> None:
    """Copy host scalars into ``device`` (the MSM workspace's buffer) through this GPU's
    pinned buffers; see the module docstring."""
    key = 0 if config.ENABLE_CUDASIM else cuda.get_current_device().id
    if key not in _staging:
        _staging[key] = Staging()
    _staging[key].upload(device, host, stream)


@cpu_kernel(symbols=False, parallel=True)
def copy_words(dst, src, lo, count):
    """dst[:count] = src[lo:lo + count] (uint32), in runs of _RUN words on all cores."""
    for run in prange((count + _RUN - 1) // _RUN):
        a = run * _RUN
        b = min(count, a + _RUN)
        dst[a:b] = src[lo + a:lo + b]
