"""Benchmarks of s2sgrad against hand-written adjoints and other AD tools.

``workloads`` defines the workloads (forward functions, hand-written adjoints,
input generators), ``peers`` ports them to other AD tools, and ``run`` is the
command-line harness. See ``benchmarks/README.md``.
"""
