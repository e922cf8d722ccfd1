"""The package's structure holds: each stage imports only the stages before it and the foundations (every
import counts, also one inside a function), there is no import cycle, and no module or class is too long
to read in one sitting. `docs/design.md` describes the same layers.
"""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "s2sgrad"

# The layers, first to last: a module may import modules of its own layer and of earlier ones. Within a layer
# the import graph must still have no cycle.
LAYERS = [
    ["errors", "markers", "optimizations", "schedules", "guards"],    # foundations
    ["runtime"],                  # what generated code imports
    ["ir"],                       # the lowered form and its vocabulary
    ["rules"],                    # derivative rules
    ["frontend"],                 # Python function -> lowered form
    ["analysis"],                 # facts about the lowered form
    ["transforms"],               # lowered form -> generated syntax (reverse mode, forward mode)
    ["backend"],                  # generated syntax -> tidy code, printed and compiled
    ["pipeline"],                 # one generated module, driving every stage
    ["api"],                      # the public functions
    ["cli", "__main__", "__init__"],
]
# What a stage may import beyond the layer rule (none), and what it may import at most.
ONLY = {"runtime": {"errors", "schedules", "runtime"}, "markers": {"errors", "markers"},
        "errors": {"errors"}, "schedules": {"schedules"}, "optimizations": {"errors", "optimizations"},
        "guards": {"guards"}}
MODULE_LINES = 600
CLASS_LINES = 350


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: pathlib.Path) -> set[str]:
    """Every s2sgrad module `path` imports (at any depth: function-level imports count)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "s2sgrad":
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                is_module = (PACKAGE.parent / (candidate.replace(".", "/") + ".py")).exists() or \
                    (PACKAGE.parent / candidate.replace(".", "/") / "__init__.py").exists()
                found.add(candidate if is_module else target)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "s2sgrad"}
    return found - {name}


GRAPH = {module_name(p): imported(p) for p in sorted(PACKAGE.rglob("*.py"))}


def stage(module: str) -> str:
    """The top-level part of the package `module` belongs to (``s2sgrad`` itself is ``__init__``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer(module: str) -> int:
    for k, names in enumerate(LAYERS):
        if stage(module) in names:
            return k
    raise AssertionError(f"{module} is in no layer of tests/test_layout.py")


def test_every_module_is_in_a_layer():
    for module in GRAPH:
        layer(module)


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_follow_the_layers(module):
    later = sorted(m for m in GRAPH[module] if layer(m) > layer(module))
    assert not later, f"{module} imports a later stage: {', '.join(later)}"
    if stage(module) in ONLY:
        others = sorted(m for m in GRAPH[module] if stage(m) not in ONLY[stage(module)])
        assert not others, f"{module} may import only {sorted(ONLY[stage(module)])}, not {', '.join(others)}"


def test_rules_never_import_the_public_api():
    for module, targets in GRAPH.items():
        if stage(module) == "rules":
            assert not {t for t in targets if stage(t) == "api"}, module


def cycles(graph: dict) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycles_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle():
    # a package's __init__ importing its own modules is not a cycle through them
    graph = {m: {t for t in targets if not m.startswith(t + ".")} for m, targets in GRAPH.items()}
    assert cycles(graph) == []


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=module_name)
def test_modules_and_classes_are_short(path):
    text = path.read_text()
    assert len(text.splitlines()) <= MODULE_LINES, f"{module_name(path)} has {len(text.splitlines())} lines"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            size = node.end_lineno - node.lineno + 1
            assert size <= CLASS_LINES, f"class {node.name} of {module_name(path)} has {size} lines"
