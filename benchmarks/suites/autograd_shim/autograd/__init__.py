"""autograd's public names, mapped onto s2sgrad, so that autograd's own tests run through s2sgrad.

``autograd.numpy`` is NumPy itself (``autograd.numpy.random`` is ``numpy.random``, and so on) and
``autograd.scipy.*`` is SciPy: the functions under test are plain NumPy code. The differential operators
(`grad`, `value_and_grad`, `jacobian`, `make_vjp`, ...) are built from ``s2sgrad.grad`` / ``vjp`` /
``jvp`` / ``hvp`` / ``hessian``. A name of autograd's internals (tracing, boxes, vector spaces, primitives)
is not here: a test that imports one is counted as not mapped.
"""
import builtins as _builtins
import sys as _sys
import types as _types

import numpy as _np

from benchmarks.suites.operators import (  # noqa: F401  (the public names)
    checkpoint,
    deriv,
    elementwise_grad,
    grad,
    grad_and_aux,
    grad_named,
    hessian,
    hessian_tensor_product,
    hessian_vector_product,
    holomorphic_grad,
    jacobian,
    make_ggnvp,
    make_hvp,
    make_jvp,
    make_vjp,
    multigrad_dict,
    tensor_jacobian_product,
    value_and_grad,
    vector_jacobian_product,
)

dict, isinstance, list, tuple, type = _builtins.dict, _builtins.isinstance, _builtins.list, _builtins.tuple, \
    _builtins.type


def _alias(name: str, module) -> None:
    _sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    setattr(_sys.modules[parent], child, module)


def _install() -> None:
    import scipy
    import scipy.integrate
    import scipy.linalg
    import scipy.signal
    import scipy.special
    import scipy.stats
    _alias("autograd.numpy", _np)
    for sub in ("random", "linalg", "fft"):
        _alias(f"autograd.numpy.{sub}", getattr(_np, sub))
    _alias("autograd.scipy", scipy)
    for sub in ("integrate", "linalg", "signal", "special", "stats"):
        _alias(f"autograd.scipy.{sub}", getattr(scipy, sub))
    for dist in ("norm", "t", "gamma", "beta", "chi2", "poisson", "multivariate_normal", "dirichlet"):
        _alias(f"autograd.scipy.stats.{dist}", getattr(scipy.stats, dist))
    misc = _types.ModuleType("autograd.scipy.misc")
    misc.logsumexp = scipy.special.logsumexp
    _alias("autograd.scipy.misc", misc)


_install()
