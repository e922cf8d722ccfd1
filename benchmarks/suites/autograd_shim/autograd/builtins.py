"""autograd's container types are Python's."""
from builtins import dict, isinstance, list, tuple, type  # noqa: F401
