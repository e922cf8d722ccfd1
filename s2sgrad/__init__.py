"""s2sgrad: source-to-source automatic differentiation for Python and NumPy.

    >>> import numpy as np, s2sgrad as sg
    >>> def f(x):
    ...     return np.sum(np.tanh(x) ** 2)
    >>> df = sg.grad(f)
    >>> print(sg.source(f))          # the generated gradient df runs, as plain Python     # doctest: +SKIP
"""
from .api.forward import hessian, hvp, jvp
from .api.pytrees import register_dataclass, register_pytree_node
from .api.reverse import check_grad, grad, source, value_and_grad, vjp
from .errors import NoDerivativeRule, NonScalarOutput, S2SGradError, SourceNotFound, UnsupportedSyntax, WrtError
from .markers import checkpointed, recompute, stop_gradient
from .optimizations import OPTIMIZATIONS
from .rules import adjoint, d, tangent
from .runtime import SparseGrad
from .schedules import Online, Periodic, Revolve

__version__ = "0.1.0"

__all__ = [
    "grad", "value_and_grad", "vjp", "source", "check_grad", "stop_gradient", "recompute", "checkpointed",
    "jvp", "hvp", "hessian", "adjoint", "tangent", "d", "OPTIMIZATIONS", "register_pytree_node", "register_dataclass",
    "Periodic", "Revolve", "Online", "SparseGrad",
    "S2SGradError", "UnsupportedSyntax", "NoDerivativeRule", "NonScalarOutput", "WrtError", "SourceNotFound",
]
