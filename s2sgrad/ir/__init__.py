"""The intermediate representation every stage after the front end reads: functional control flow in
A-normal form (`nodes`), the plain functions operators lower to (`primitives`), constructors of Python
syntax (`syntax`) and fresh names for generated code (`names`).

    >>> from s2sgrad.ir import Assign, Op, Var
    >>> Assign("y", Op(abs, [Var("x")]))               # doctest: +SKIP
"""
from .nodes import (
                    Assign,
                    Atom,
                    Const,
                    Function,
                    Global,
                    If,
                    Op,
                    Var,
                    While,
                    atom_expr,
                    atoms_of,
                    captures,
                    defined_names,
                    op_expr,
                    reads,
                    to_ast,
                    to_source,
                    value_expr,
                    writes,
)

__all__ = ["Assign", "Atom", "Const", "Function", "Global", "If", "Op", "Var", "While", "atom_expr", "atoms_of",
           "captures", "defined_names", "op_expr", "reads", "to_ast", "to_source", "value_expr", "writes"]
