"""The transformations of a lowered function into Python syntax: `reverse` (forward and backward sweeps)
and `forward` (tangents), each applying the derivative rules of `s2sgrad.rules` through a template
engine (`inline`, `tangent_inline`).
"""
