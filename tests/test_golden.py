"""The generated code of a few showcase functions, pinned in reviewed golden files.

Regenerate (then review the diff!) with:  S2SGRAD_REGENERATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""
import os
from pathlib import Path

import numpy as np
import pytest
import showcase

import s2sgrad as sg

GOLDEN = Path(__file__).parent / "golden"
rng = np.random.default_rng(0)

CASES = {
    "design_example": (showcase.design_example, 0, (0.7, 3)),
    "rnn_loss": (showcase.rnn_loss, (0, 1, 2), (rng.standard_normal((4, 4)), rng.standard_normal((4, 3)),
                                              rng.standard_normal(4), rng.standard_normal((5, 3)))),
    "softmax_cross_entropy": (showcase.softmax_cross_entropy, 0, (rng.standard_normal(5), 2)),
    "piecewise": (showcase.piecewise, 0, (0.3, 9)),
    "collect": (showcase.collect, 0, (rng.standard_normal(3), 4)),
    "deep": (showcase.deep, (0, 1), (rng.standard_normal(3), rng.standard_normal((3, 3)))),
    "integrate": (showcase.integrate, (0, 1), (rng.standard_normal(3), rng.standard_normal((3, 3)), 20)),
}


FORWARD = {"design_example_forward": (showcase.design_example, 0, (0.7, 3)),
           "rnn_loss_forward": CASES["rnn_loss"]}


@pytest.mark.parametrize("name", sorted(CASES) + sorted(FORWARD))
def test_generated_source_matches_golden(name):
    fn, wrt, args = CASES[name] if name in CASES else FORWARD[name]
    text = sg.source(fn, wrt=wrt, args=args, mode="forward" if name in FORWARD else "grad")
    path = GOLDEN / f"{name}.py"
    if os.environ.get("S2SGRAD_REGENERATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"generated code of {name} changed; review and regenerate"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_gradient_is_right(name):
    fn, wrt, args = CASES[name]
    assert sg.check_grad(fn, *args, wrt=wrt) < 1e-7


def test_golden_file_runs_as_a_module():
    """A golden file is the whole module: importing it and calling the function gives the gradient."""
    namespace = {}
    exec(compile((GOLDEN / "design_example.py").read_text(), "design_example.py", "exec"), namespace)
    assert namespace["ddesign_example_dx"](0.7, 3) == pytest.approx(sg.grad(showcase.design_example)(0.7, 3))
