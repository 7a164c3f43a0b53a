"""The CLI's drivers: what a command does beyond parsing and printing (cli.py calls
them; cluster/ reuses batch's plans).

- ``batch``: ``numba-cuzk run``'s plan and its jobs from files.
- ``compile``: ``numba-cuzk compile``, every kernel into the kernel cache in parallel
  processes, and the first run's rule (first_run_on_gpu).
- ``first_run``: the notice and progress of a first run's compiles.
- ``ahead``: CUDA kernels compiled for GPUs this machine does not have, no GPU needed.
- ``prebuilt``: ``compile --targets/--archive`` builds an archive of kernels, ``--fetch``
  installs one, checked by hash.
- ``kernel_report``: ``info --kernels``, every kernel by name, source line and cache state.
- ``progress``: a bar on a terminal, plain lines in a log.
"""
