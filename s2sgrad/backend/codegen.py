"""Stage 5: make generated code read well, print it with comments, and compile it.

- `fold` puts temporaries that are used once back into the expression that uses them;
- ``while True: if not c: break`` becomes ``while c:``;
- `render` prints a module with ``ast.unparse``, adding ``# file.py:line`` after each statement
  whose origin differs from the one before;
- `compile_module` writes that text to a file (`source_files`), registers it with `linecache` and
  compiles it under the file's name, so that tracebacks, pdb, ``inspect.getsource``, coverage and
  profilers show the generated code.
"""
from __future__ import annotations

import ast
import linecache
import os

from ..ir.sizes import printed
from ..ir.syntax import keep_origin, names_read, note_of, origin_of, shape_of
from ..ir.trees import Transformer, copy_tree, walk
from .generated_source import Source
from .source_files import write_source

SOURCE_GLOBAL = "__s2sgrad_source__"       # a generated module's `Source`, in its namespace

# The calls in generated code that are not pure, besides those of the generated functions a driver names
# impure (the forward and backward functions of called user functions: they push, pop and run user code).
IMPURE = {"push", "pop", "print", "assert_true", "append"}


def _uses(tree) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _assigned(tree) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, ast.arg):
            counts[node.arg] = counts.get(node.arg, 0) + 1
    return counts


def _is_pure(expr, impure_calls: frozenset[str]) -> bool:
    for node in walk(expr):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name is None or name in IMPURE or name in impure_calls:
                return False
    return True


def _writes(node) -> set[str]:
    """The names `node` binds, and those it changes in place (``y[i] = v`` and ``y[i] += v`` change y)."""
    names = set()
    for n in walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store):
            root = n.value
            while isinstance(root, (ast.Subscript, ast.Attribute)):
                root = root.value
            if isinstance(root, ast.Name):
                names.add(root.id)
    return names


def _header(stmt) -> list:
    """The expressions a compound statement evaluates before entering its blocks."""
    if isinstance(stmt, ast.If):
        return [stmt.test]
    if isinstance(stmt, ast.For):
        return [stmt.iter]
    if isinstance(stmt, ast.While):
        return []
    return [stmt]


class _Replace(Transformer):
    def __init__(self, name, expr):
        self.name = name
        self.expr = expr
        self.done = False

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load) and not self.done:
            self.done = True
            return self.expr
        return node


class _Unshare(Transformer):
    """Give every place in the tree its own node: the passes below rename and rewrite nodes in place."""

    def __init__(self):
        self.seen: set[int] = set()

    def visit(self, node):
        if id(node) in self.seen:
            return copy_tree(node)
        self.seen.add(id(node))
        return super().visit(node)


def unshare(fn: ast.FunctionDef) -> ast.FunctionDef:
    """Copy each node that appears in more than one place (a rule's expression used twice, say)."""
    return _Unshare().visit(fn)


def fold(fn: ast.FunctionDef, foldable: set[str], impure_calls: frozenset[str] = frozenset()) -> ast.FunctionDef:
    """Inline each temporary assigned once and read once, where the read follows in the same block and
    nothing between can tell (a call of a function in `impure_calls` or `IMPURE` is never moved, nor
    moved across).

        >>> fn = ast.parse("def f(x):\\n    t = np.sin(x)\\n    return t * 2").body[0]
        >>> print(ast.unparse(fold(fn, {"t"})))
        def f(x):
            return np.sin(x) * 2
    """
    # (counted once: a fold moves an expression, so the counts stay those of every name but the one folded away)
    uses = _uses(fn)
    assigned = _assigned(fn)
    while _fold_block(fn.body, uses, assigned, foldable, impure_calls):
        pass
    for node in walk(fn):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(node, ast.While):
                _while_condition(node)
    return fn


def _fold_block(block: list, uses, assigned, foldable, impure_calls) -> bool:
    changed = False
    for stmt in block:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                changed |= _fold_block(inner, uses, assigned, foldable, impure_calls)
    i = 0
    while i < len(block):
        stmt = block[i]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if name in foldable and uses.get(name) == 1 and assigned.get(name) == 1 \
                    and _is_pure(stmt.value, impure_calls):
                reads = names_read(stmt.value)
                for j in range(i + 1, len(block)):
                    later = block[j]
                    header = _header(later)
                    if any(name in names_read(h) for h in header):
                        replacer = _Replace(name, stmt.value)
                        if isinstance(later, ast.If):
                            later.test = replacer.visit(later.test)
                        elif isinstance(later, ast.For):
                            later.iter = replacer.visit(later.iter)
                        else:
                            replacer.visit(later)
                        if replacer.done:
                            keep_origin(later, stmt)
                            del block[i]
                            changed = True
                            i -= 1
                        break
                    if name in names_read(later) or _writes(later) & reads or not _is_pure_stmt(later, impure_calls):
                        break
        i += 1
    return changed


def _is_pure_stmt(stmt, impure_calls) -> bool:
    return not isinstance(stmt, (ast.Expr, ast.While, ast.For, ast.If, ast.Break)) and _is_pure(stmt, impure_calls)


def _while_condition(loop: ast.While) -> None:
    """``while True: if not c: break`` -> ``while c:`` (when the loop has no other header statements)."""
    if isinstance(loop.test, ast.Constant) and loop.test.value is True and loop.body:
        first = loop.body[0]
        if isinstance(first, ast.If) and not first.orelse and len(first.body) == 1 \
                and isinstance(first.body[0], ast.Break) and isinstance(first.test, ast.UnaryOp) \
                and isinstance(first.test.op, ast.Not):
            loop.test = first.test.operand
            loop.body = loop.body[1:] or [ast.Pass()]


class _NoBroadcast(Transformer):
    """``np.broadcast_to(e, s) * v`` -> ``e * v`` where v is known to have shape s (the product is the same), also
    where the broadcast is first scaled by numbers (``np.broadcast_to(e, s) * 2 * v`` -> ``e * 2 * v``)."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Mult):
            for side, other in (("left", node.right), ("right", node.left)):
                holder, place = node, side          # the broadcast is getattr(holder, place)
                while isinstance(getattr(holder, place), ast.BinOp) and isinstance(getattr(holder, place).op, ast.Mult):
                    product = getattr(holder, place)
                    if _is_number(product.right):
                        holder, place = product, "left"
                    elif _is_number(product.left):
                        holder, place = product, "right"
                    else:
                        break
                shape = _broadcast_shape(getattr(holder, place))
                if shape is not None and printed(shape_of(other)) == shape:
                    setattr(holder, place, getattr(holder, place).args[0])
                    return node
        return node


def _is_number(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _broadcast_shape(node):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "broadcast_to" \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "np" and len(node.args) == 2:
        shape = node.args[1]
        if isinstance(shape, ast.Tuple) and all(isinstance(n, ast.Name) or isinstance(n, ast.Constant)
                                                and type(n.value) is int for n in shape.elts):
            return tuple(n.id if isinstance(n, ast.Name) else n.value for n in shape.elts)   # (a size by its name)
        try:
            return tuple(ast.literal_eval(shape))
        except (ValueError, TypeError):
            return None
    return None


def drop_broadcasts(fn: ast.FunctionDef) -> ast.FunctionDef:
    """``np.broadcast_to(e, s) * v`` -> ``e * v`` where v has shape s, also through a name the broadcast is
    given (``g = np.broadcast_to(dsum, s)``) when every read of that name is such a factor."""
    _NoBroadcast().visit(fn)
    _drop_named_broadcasts(fn)
    return fn


def _drop_named_broadcasts(fn: ast.FunctionDef) -> None:
    broadcasts = [n for n in walk(fn) if isinstance(n, ast.Assign) and _broadcast_shape(n.value) is not None]
    if not broadcasts:
        return
    parents = {id(child): node for node in walk(fn) for child in ast.iter_child_nodes(node)}
    assigned, written = _assigned(fn), _writes(fn)
    for stmt in broadcasts:
        shape = _broadcast_shape(stmt.value)
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) \
                or not isinstance(stmt.value.args[0], ast.Name) or stmt.value.args[0].id in written \
                or assigned.get(stmt.targets[0].id) != 1:
            continue
        names, copies = {stmt.targets[0].id}, []
        for other in walk(fn):                 # copies of it: d = g
            if isinstance(other, ast.Assign) and isinstance(other.value, ast.Name) and other.value.id in names \
                    and len(other.targets) == 1 and isinstance(other.targets[0], ast.Name) \
                    and assigned.get(other.targets[0].id) == 1:
                names.add(other.targets[0].id)
                copies.append(other)
        reads = [n for n in walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                 and n.id in names and not any(n is c.value for c in copies)]
        if reads and all(_factor_of_shape(read, shape, parents) for read in reads):
            for read in reads:
                read.id = stmt.value.args[0].id
            dropped = {id(stmt)} | {id(c) for c in copies}
            for node in walk(fn):
                for field in ("body", "orelse"):
                    block = getattr(node, field, None)
                    if isinstance(block, list) and any(id(b) in dropped for b in block):
                        setattr(node, field, [b for b in block if id(b) not in dropped] or [ast.Pass()])


def _factor_of_shape(read, shape, parents) -> bool:
    """Is `read` (perhaps negated) a factor of ``*`` or ``/`` whose other operand has `shape`?"""
    node = read
    while isinstance(parents.get(id(node)), ast.UnaryOp) and isinstance(parents[id(node)].op, ast.USub):
        node = parents[id(node)]
    product = parents.get(id(node))
    if not (isinstance(product, ast.BinOp) and isinstance(product.op, (ast.Mult, ast.Div))):
        return False
    other = product.right if product.left is node else product.left
    return printed(shape_of(other)) == shape


def merge_collections(fn: ast.FunctionDef) -> ast.FunctionDef:
    """Lists that collect the same value in the same loop become one list (``g_rows``, ``g_rows_1`` -> ``g_rows``).

    Such a list is made empty before its loop and made an array after it: assigned twice."""
    made = {}                                     # list name -> times assigned
    for node in walk(fn):
        for target in _writes(node) if isinstance(node, (ast.Assign, ast.AugAssign)) else ():
            made[target] = made.get(target, 0) + 1
    renames = {}
    for loop in (n for n in walk(fn) if isinstance(n, (ast.For, ast.While))):
        collected = {}
        kept = []
        for stmt in loop.body:
            call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
            if call is not None and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
                    and isinstance(call.func.value, ast.Name) and len(call.args) == 1 \
                    and isinstance(call.args[0], ast.Name) and made.get(call.func.value.id) == 2:
                lst, value = call.func.value.id, call.args[0].id
                if value in collected:
                    renames[lst] = collected[value]
                    continue
                collected[value] = lst
            kept.append(stmt)
        loop.body = kept
    if not renames:
        return fn

    def drop(block):
        out = []
        for stmt in block:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and stmt.targets[0].id in renames:
                continue
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(stmt, field, drop(inner))
            out.append(stmt)
        return out
    fn.body = drop(fn.body)
    for node in walk(fn):
        if isinstance(node, ast.Name) and node.id in renames:
            node.id = renames[node.id]
    return fn


# ---------------------------------------------------------------- printing

def _comment(stmt, previous) -> str:
    if note_of(stmt):
        return f"  # {note_of(stmt)}"
    origin = origin_of(stmt)
    if origin is None:
        return ""
    if previous is not None and (previous.filename, previous.line) == (origin.filename, origin.line):
        return ""
    return f"  # {os.path.basename(origin.filename)}:{origin.line}"


class _Printer:
    """Prints statements, recording for every line of a statement the user's line it came from (`origins`): a
    statement without an origin of its own continues the one before it in its function."""

    def __init__(self):
        self.lines: list[str] = []
        self.origins: dict = {}                  # line number (1-based) -> Location
        self.previous = None                     # the origin of the last comment printed in the block
        self.current = None                      # the origin statements without one continue

    def emit(self, text: str, where) -> None:
        for line in text.split("\n"):
            self.lines.append(line)
            if where is not None:
                self.origins[len(self.lines)] = where

    def block(self, stmts, indent):
        self.previous = None
        for stmt in stmts:
            self.stmt(stmt, indent)

    def stmt(self, stmt, indent):
        pad = "    " * indent
        comment = _comment(stmt, self.previous)
        if origin_of(stmt) is not None:
            self.previous = self.current = origin_of(stmt)
        where = self.current
        if isinstance(stmt, ast.FunctionDef):
            header = f"def {stmt.name}({ast.unparse(stmt.args)}):"
            if ast.get_docstring(stmt) is None and self.lines and self.lines[-1] != "":
                self.lines.append("")
            self.lines.append(pad + header)
            self.current = None
            self.block(stmt.body, indent + 1)
            self.previous = self.current = None
        elif isinstance(stmt, ast.If):
            body, orelse, test = stmt.body, stmt.orelse, stmt.test
            if len(body) == 1 and isinstance(body[0], ast.Pass) and orelse:
                body, orelse, test = orelse, [], ast.UnaryOp(ast.Not(), test)     # if c: pass else: X
            self.emit(f"{pad}if {ast.unparse(test)}:{comment}", where)
            self.block(body, indent + 1)
            if orelse and not (len(orelse) == 1 and isinstance(orelse[0], ast.Pass)):
                self.emit(f"{pad}else:", where)
                self.block(orelse, indent + 1)
        elif isinstance(stmt, ast.While):
            self.emit(f"{pad}while {ast.unparse(stmt.test)}:{comment}", where)
            self.block(stmt.body, indent + 1)
        elif isinstance(stmt, ast.For):
            target = ast.unparse(stmt.target)
            if isinstance(stmt.target, ast.Tuple) and stmt.target.elts:
                target = target[1:-1]                            # for a, b in ...: (ast.unparse adds parentheses)
            self.emit(f"{pad}for {target} in {ast.unparse(stmt.iter)}:{comment}", where)
            self.block(stmt.body, indent + 1)
        else:
            text = _unparse(stmt)
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                    and isinstance(stmt.value.value, str):
                self.lines.append(pad + text)
                return
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name) and stmt.value.id.startswith("#"):
                self.lines.append(pad + stmt.value.id)
                return
            self.emit(pad + text + comment, where)
        if isinstance(stmt, (ast.If, ast.While, ast.For)):
            self.previous = origin_of(stmt)
            self.current = where if origin_of(stmt) is None else origin_of(stmt)


def _unparse(stmt) -> str:
    """``ast.unparse``, writing tuple targets as ``a, b = ...`` on every Python version (3.10 adds parentheses)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple) \
            and len(stmt.targets[0].elts) > 1:
        return ", ".join(ast.unparse(e) for e in stmt.targets[0].elts) + " = " + ast.unparse(stmt.value)
    return ast.unparse(stmt)


def comment_line(text: str) -> ast.Expr:
    """A statement that prints as a whole-line comment (``# forward sweep``)."""
    return ast.Expr(ast.Name("# " + text, ast.Load()))


def render(module_body: list, header: str = "") -> Source:
    """The module as Python source, with origin comments (and every line's origin in `Source.origins`)."""
    printer = _Printer()
    if header:
        printer.lines.extend(header.rstrip("\n").splitlines())
    for stmt in module_body:
        ast.fix_missing_locations(stmt)
        _NegativeBases().visit(stmt)
        if isinstance(stmt, ast.FunctionDef) and printer.lines and printer.lines[-1] != "":
            printer.lines.extend(["", ""])
        printer.stmt(stmt, 0)
    return Source("\n".join(printer.lines) + "\n", printer.origins)


class _NegativeBases(Transformer):
    """A negative number raised to a power or with an attribute read is written (-0.5) ** 2, not -0.5 ** 2
    (which ``ast.unparse`` prints for a constant -0.5, and Python reads as -(0.5 ** 2))."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Pow):
            node.left = _parenthesized(node.left)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.value = _parenthesized(node.value)
        return node


def _parenthesized(node: ast.expr) -> ast.expr:
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and str(value).startswith("-"):
        return ast.copy_location(ast.UnaryOp(ast.USub(), ast.Constant(-value)), node)
    return node


def compile_module(source: Source, stem: str, namespace: dict) -> tuple[dict, str]:
    """Run `source` as a module in `namespace`, returning the namespace and the module's file name.

    The text is written to a file named after `stem` (see `source_files`) for everything that reads source
    from disk, and registered in `linecache` under that name for everything that reads it from there; the
    code is compiled from `source` itself, whatever the file holds. The namespace keeps `source` (with its
    line map) as ``__s2sgrad_source__``: that marks the functions it defines as generated."""
    filename = write_source(source, stem) or f"<s2sgrad {stem}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace[SOURCE_GLOBAL] = source
    exec(compile(source, filename, "exec"), namespace)
    return namespace, filename
