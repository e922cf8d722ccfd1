"""Analyses of the lowered form, each a walk over its blocks: `activity` (what is varied and useful, and
each name's kind), `shapes`, `dtypes`, `inplace` (which writes may run in place), `liveness` (which
primal statements a gradient can skip) and `randomness` (which generators recomputed code draws from).
"""
