"""The front end: from a Python function to the lowered form of `s2sgrad.ir`.

`parse` reads the source and resolves its free names, `desugar` rewrites ``for`` loops, comprehensions,
``break``/``continue`` and early returns on the syntax tree, `lower` writes the result in A-normal form
and single assignment (consulting `aliasing` on which names share an object), and `relower` reads a
generated gradient back in so that forward mode can differentiate it again.
"""
