"""The transformations of a lowered function into Python syntax: `reverse` (forward and backward sweeps)
and `forward` (tangents), each applying the derivative rules of `s2sgrad.rules` through one template
engine (`templates`) and its two modes (`adjoint_templates`, `tangent_templates`).
"""
