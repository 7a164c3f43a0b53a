"""Reads the engine's timelines and says where the GPU's time went.

``reader.read(path)`` parses a timeline (schema: ``numba_cuzk.events``);
``analysis.analyze(timeline, window)`` computes the figures; ``report`` prints them (rich
tables, a dict for JSON, a short form); ``plot.gantt`` draws them. Imports no CUDA and no
compute package, so any machine can read a timeline from a GPU host.
"""
