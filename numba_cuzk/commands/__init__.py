"""The CLI's drivers: what a command does beyond parsing and printing (cli.py calls
them; nothing else in the package imports them).

- ``compile``: ``numba-cuzk compile`` and the first run's compile, every kernel into the
  kernel cache in parallel processes.
"""
