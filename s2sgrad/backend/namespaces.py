"""Generated code for arrays of another array namespace: every ``np.*`` a generated function names becomes its
array API form (``xp.*``, or a helper of `runtime.namespaced`) through one table, `ARRAY_API`; a NumPy name with
no such form is refused at the user's line; NumPy's ``out=`` becomes an assignment (Dask and JAX arrays are
immutable); and a runtime helper written for NumPy alone is refused.

    >>> import ast
    >>> fn = ast.parse("def f(x):\\n    y = np.concatenate([np.exp(x), x])\\n    return np.sum(y, axis=0)").body[0]
    >>> print(ast.unparse(to_namespace(fn, "array_api_strict")))
    def f(x):
        y = xp.concat([xp.exp(x), x])
        return xp.sum(y, axis=0)
"""
from __future__ import annotations

import ast
import importlib

from .. import runtime
from ..errors import UnsupportedSyntax
from ..ir.syntax import origin_of
from ..runtime import namespaced

_SAME = """abs acos acosh add asin asinh atan atan2 atanh broadcast_to ceil clip cos cosh divide equal exp expm1
    flip floor greater greater_equal isfinite isinf isnan less less_equal log log1p log2 log10 logaddexp
    logical_and logical_not logical_or matmul max maximum mean min minimum multiply negative not_equal ones_like
    prod reshape roll sign sin sinh sqrt square squeeze stack subtract sum tan tanh tensordot vecdot
    zeros_like ones_like full_like arange moveaxis asarray sort argsort argmax argmin cumulative_sum std var trunc round
    e pi inf nan newaxis float32 float64 int32 int64 bool""".split()
_RENAMED = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
            "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "concatenate": "concat", "power": "pow",
            "cumsum": "cumulative_sum", "amax": "max", "amin": "min", "mod": "remainder",
            "remainder": "remainder", "true_divide": "divide", "linalg.inv": "linalg.inv",
            "linalg.solve": "linalg.solve", "linalg.cholesky": "linalg.cholesky", "linalg.det": "linalg.det",
            "linalg.eigh": "linalg.eigh", "linalg.slogdet": "linalg.slogdet"}
_HELPERS = {"shape": "shape_of", "ndim": "ndim_of", "size": "size_of", "dot": "xp_dot", "outer": "xp_outer",
            "transpose": "xp_transpose", "swapaxes": "xp_swapaxes"}

_NUMPY_SCALARS = frozenset(f"np.{t}" for t in ("float64", "float32", "float16", "int64", "int32", "bool_"))

ARRAY_API: dict[str, str] = {
    **{f"np.{n}": f"xp.{n}" for n in _SAME},
    **{f"np.{n}": f"xp.{to}" for n, to in _RENAMED.items()},
    **{f"np.{n}": to for n, to in _HELPERS.items()},
    **{f"np.{n}": f"xp_{n}" for n in ("broadcast_to", "expand_dims", "where", "sum_of", "array", "asarray", "zeros",
                                      "ones", "full", "empty")},
}
"""A NumPy name generated code calls -> its array API form: an ``xp.*`` name or a `runtime.namespaced` helper."""

NEUTRAL_HELPERS = frozenset({
    "add_grads", "if_else", "while_loop", "read_after_loop", "assert_true", "raise_error", "format_string",
    "exception_of", "UNBOUND", "Checkpoints", "Work", "stack_push", "stack_pop", "no_grads",
    "seq_add_at", "seq_scatter", "make_dict", "dict_get", "dict_got", "dict_items", "dict_values", "dict_keys",
    "dict_without", "dict_of_values", "dict_unmade", "derivative_vjp", "derivative_jvp", "rebuilt"})
"""Runtime helpers that only move values about (stacks, containers, control): they hold for any namespace."""

_NUMPY_HELPERS = frozenset(runtime.__all__) - NEUTRAL_HELPERS - set(namespaced.__all__)


def to_namespace(fn: ast.FunctionDef, namespace: str) -> ast.FunctionDef:
    """`fn` (changed in place) calling the array API (``xp.*``) where it called NumPy; the user's line in the
    refusal of a name with no array API form."""
    taken = {a.arg for a in fn.args.args + fn.args.kwonlyargs} \
        | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    clash = sorted(taken & ({"xp"} | set(namespaced.__all__)))
    if clash:
        where = next((origin_of(stmt) for stmt in fn.body if origin_of(stmt) is not None), None)
        raise UnsupportedSyntax(f"the name {clash[0]!r} is the one generated code for {namespace} arrays gives "
                                f"to its own {'array namespace' if clash[0] == 'xp' else 'helper'}", where,
                                hint=f"rename {clash[0]!r} in the function differentiated")
    _Rewrite(namespace).run(fn.body)
    return fn


class _Rewrite(ast.NodeTransformer):
    def __init__(self, namespace: str):
        self.namespace = namespace
        self.location = None
        self.masks: set[str] = set()        # names bound to a comparison (a boolean array)
        self.batches: dict[str, str] = {}   # a RowBatches' name -> the gradient it adds into

    def run(self, body: list) -> None:
        for i, stmt in enumerate(body):
            self.location = origin_of(stmt) or self.location
            if isinstance(stmt, ast.For) and not (isinstance(stmt.iter, ast.Call)
                                                  and _dotted(stmt.iter.func) == "range"):
                stmt.iter = ast.Call(ast.Name("rows_of", ast.Load()), [stmt.iter], [])   # (arrays are not iterable)
            if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try)):
                for name in ("test", "iter", "target", "items"):
                    if hasattr(stmt, name) and isinstance(getattr(stmt, name), ast.AST):
                        setattr(stmt, name, self.visit(getattr(stmt, name)))
                for name in ("body", "orelse", "finalbody"):
                    self.run(getattr(stmt, name, []))
                for handler in getattr(stmt, "handlers", []):
                    self.run(handler.body)
                continue
            stmt = body[i] = self._batches(stmt)
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Compare):
                self.masks.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
            body[i] = ast.copy_location(self.visit(self._functional(self._without_new_axes(_without_out(stmt)))), stmt)
            for name in ("origin", "note"):
                if hasattr(stmt, name):
                    setattr(body[i], name, getattr(stmt, name))

    def _batches(self, stmt: ast.stmt) -> ast.stmt:
        """``B = RowBatches(n, into=dW)`` ... ``B.flush()`` as ... ``dW += B.total()``: the batches sum on their
        own."""
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) \
                and _dotted(stmt.value.func) == "RowBatches":
            into = [k for k in stmt.value.keywords if k.arg == "into"]
            if into and isinstance(into[0].value, ast.Name) and isinstance(stmt.targets[0], ast.Name):
                self.batches[stmt.targets[0].id] = into[0].value.id
                stmt.value.keywords = [k for k in stmt.value.keywords if k.arg != "into"]
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and not stmt.value.args \
                and _dotted(stmt.value.func) in {f"{b}.flush" for b in self.batches}:
            batches = _dotted(stmt.value.func).rpartition(".")[0]
            total = ast.Call(ast.Attribute(ast.Name(batches, ast.Load()), "total", ast.Load()), [], [])
            new = ast.AugAssign(ast.Name(self.batches[batches], ast.Store()), ast.Add(), total)
            for name in ("origin", "note"):
                if hasattr(stmt, name):
                    setattr(new, name, getattr(stmt, name))
            return new
        return stmt

    def _without_new_axes(self, stmt: ast.stmt) -> ast.stmt:
        """``a[:, None] += v`` as ``a[:] += xp.reshape(v, shape_of(a[:]))``: the array API writes through no new
        axis."""
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript) \
                and isinstance(stmt.target.slice, ast.Tuple) \
                and any(isinstance(e, ast.Constant) and e.value is None for e in stmt.target.slice.elts):
            kept = [e for e in stmt.target.slice.elts if not (isinstance(e, ast.Constant) and e.value is None)]
            target = ast.Subscript(stmt.target.value, ast.Tuple(kept or [ast.Constant(...)], ast.Load()), ast.Store())
            read = ast.Subscript(stmt.target.value, target.slice, ast.Load())
            value = ast.parse("xp.reshape(v, shape_of(a))", mode="eval").body
            value.args = [stmt.value, ast.Call(ast.Name("shape_of", ast.Load()), [read], [])]
            return ast.AugAssign(target, stmt.op, value)
        return stmt

    def _functional(self, stmt: ast.stmt) -> ast.stmt:
        """``a[i] += v`` as ``a = xp_add_at(a, i, v)`` and ``a[i] = v`` as ``a = xp_set_at(a, i, v)``: in place
        where the namespace writes in place, ``.at[i]`` on JAX, whose arrays are immutable."""
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript) \
                and isinstance(stmt.target.value, ast.Name) and isinstance(stmt.op, (ast.Add, ast.Sub)):
            value = stmt.value if isinstance(stmt.op, ast.Add) else ast.UnaryOp(ast.USub(), stmt.value)
            helper = "xp_add_at"
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript) \
                and isinstance(stmt.targets[0].value, ast.Name):
            helper, value = "xp_set_at", stmt.value
        else:
            return stmt
        target = stmt.target if isinstance(stmt, ast.AugAssign) else stmt.targets[0]
        index = _index_value(target.slice)
        return ast.Assign([ast.Name(target.value.id, ast.Store())],
                          ast.Call(ast.Name(helper, ast.Load()), [ast.Name(target.value.id, ast.Load()), index, value],
                                   []))

    def visit_Attribute(self, node: ast.Attribute):
        dotted = _dotted(node)
        if dotted is None or not dotted.startswith("np."):
            return self.generic_visit(node)
        form = ARRAY_API.get(dotted)
        if form is None or not _provided(form, self.namespace):
            raise UnsupportedSyntax(f"{dotted} has no array API form: a gradient on {self.namespace} arrays "
                                    "cannot call it", self.location,
                                    hint="compute it with the array API's functions, or pass NumPy arrays")
        return ast.parse(form, mode="eval").body

    def visit_Call(self, node: ast.Call):
        dotted = _dotted(node.func)
        if dotted in _NUMPY_SCALARS:        # a NumPy scalar stays one (a loop's counter, say)
            node.args = [self.visit(a) for a in node.args]
            return node
        if dotted == "len":                 # (an array of the array API has no len)
            node.func = ast.Name("length_of", ast.Load())
        if dotted == "np.sum" and any(k.arg == "dtype" for k in node.keywords):
            node.func = ast.Attribute(ast.Name("np", ast.Load()), "sum_of", ast.Load())
            dotted = "np.sum_of"
        if dotted is not None and dotted.startswith("np.") and ARRAY_API.get(dotted) in namespaced.TAKING_NAMESPACE:
            node.args.insert(0, ast.Name("xp", ast.Load()))
        return self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp):
        """``a * (x == m)`` (a mask as numbers, which the array API refuses) as ``xp.where(x == m, a, 0.0)``."""
        node = self.generic_visit(node)
        if isinstance(node.op, ast.Mult) and self._is_mask(node.left) != self._is_mask(node.right):
            mask, value = (node.left, node.right) if self._is_mask(node.left) else (node.right, node.left)
            return ast.Call(ast.parse("xp.where", mode="eval").body, [mask, value, ast.Constant(0.0)], [])
        return node

    def _is_mask(self, node) -> bool:
        return isinstance(node, ast.Compare) or isinstance(node, ast.Name) and node.id in self.masks

    def visit_Name(self, node: ast.Name):
        if node.id in _NUMPY_HELPERS:
            raise UnsupportedSyntax(f"the derivative here needs {node.id}, written for NumPy arrays alone: "
                                    f"a gradient on {self.namespace} arrays cannot use it", self.location,
                                    hint="pass NumPy arrays, or write this step with the array API's functions")
        return node


def _provided(form: str, namespace: str) -> bool:
    """Does the namespace (a module's name) have the function `form` names, where that is one of its own
    (``xp.linalg.slogdet``: the array API's optional extensions are not in every library)?

        >>> _provided("xp.linalg.inv", "array_api_strict"), _provided("xp.linalg.no_such", "array_api_strict")
        (True, False)
    """
    if not form.startswith("xp.") or "(" in form:
        return True
    value = importlib.import_module(namespace)
    for part in form.split(".")[1:]:
        value = getattr(value, part, None)
        if value is None:
            return False
    return True


def _index_value(node: ast.expr) -> ast.expr:
    """An index as a value to pass: ``1:3`` as ``slice(1, 3)``."""
    if isinstance(node, ast.Slice):
        return ast.Call(ast.Name("slice", ast.Load()), [p or ast.Constant(None) for p in (node.lower, node.upper,
                                                                                        node.step)], [])
    if isinstance(node, ast.Tuple):
        return ast.Tuple([_index_value(e) for e in node.elts], ast.Load())
    return node


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _without_out(stmt: ast.stmt) -> ast.stmt:
    """``np.f(a, b, out=t)`` as ``t = np.f(a, b)``: the same values, without writing into an array."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        out = [k for k in call.keywords if k.arg == "out"]
        if out and isinstance(out[0].value, ast.Name):
            call.keywords = [k for k in call.keywords if k.arg != "out"]
            return ast.Assign([ast.Name(out[0].value.id, ast.Store())], call)
    return stmt


__all__ = ["ARRAY_API", "NEUTRAL_HELPERS", "to_namespace"]
