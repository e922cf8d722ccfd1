"""The forward walk the analyses share (`s2sgrad.analysis.dataflow`), on small lowered blocks."""
import operator

from s2sgrad.analysis.dataflow import Forward, names
from s2sgrad.ir.nodes import Assign, Const, If, Op, Var, While, assignments


class Signs(Forward):
    """The sign of each name: "+", "-", or None where it is not known."""

    def fact(self, atom):
        if isinstance(atom, Const):
            return "+" if atom.value > 0 else "-" if atom.value < 0 else None
        return self.facts.get(atom.name)

    def transfer(self, stmt):
        value = stmt.value
        if isinstance(value, Op) and value.fn is operator.neg:
            sign = self.fact(value.args[0])
            return {"+": "-", "-": "+"}.get(sign)
        if isinstance(value, Op) and value.fn is operator.mul:
            a, b = (self.fact(x) for x in value.args)
            return None if None in (a, b) else "+" if a == b else "-"
        return None if isinstance(value, Op) else self.fact(value)

    def join(self, a, b):
        return a if a == b else None


def neg(target, atom):
    return Assign(target, Op(operator.neg, [atom]))


def test_assignments_are_walked_in_order():
    walk = Signs({"x": "+"})
    walk.block([neg("a", Var("x")), neg("b", Var("a")), Assign("c", Op(operator.mul, [Var("a"), Var("b")]))])
    assert walk.facts == {"x": "+", "a": "-", "b": "+", "c": "-"}


def test_a_branch_joins_its_outs():
    walk = Signs({"x": "+"})
    walk.block([If(Var("t"), [neg("a", Var("x"))], [Var("a")], [], [Var("x")], ["r"]),
                If(Var("t"), [], [Var("x")], [], [Const(2.0)], ["s"])])
    assert walk.facts["r"] is None and walk.facts["s"] == "+"


def test_a_loop_runs_until_its_variables_settle():
    # p = 1; q = 1; while ...: p, q = -p, q   -> p's sign alternates (unknown), q's stays
    loop = While(["p", "q"], [Const(1.0), Const(1.0)], [], Var("t"), [neg("m", Var("p"))], [Var("m"), Var("q")],
                 ["p_out", "q_out"])
    walk = Signs()
    walk.block([loop])
    assert walk.facts["p_out"] is None and walk.facts["q_out"] == "+"
    assert walk.facts["m"] is None                     # the last round saw p unknown


class Rounds(Signs):
    """Counts the rounds its loops take, and says when one did not settle."""

    def __init__(self, rounds=None):
        super().__init__()
        self.rounds, self.taken, self.widened = rounds, 0, []

    def carry(self, loop):
        self.taken += 1
        return super().carry(loop)

    def widen(self, loop):
        self.widened.append(loop)
        for p in loop.params:
            self.bind(p, None)

    def join(self, a, b):                              # never settles: every round gives a new fact
        return (a or 0) + 1 if isinstance(a, int) or a is None else None


def test_rounds_bound_a_loop_and_widen_says_what_then_holds():
    loop = While(["p"], [Const(1.0)], [], Var("t"), [], [Var("p")], ["r"])
    walk = Rounds(rounds=3)
    walk.block([loop])
    assert walk.taken == 3 and walk.widened == [loop] and walk.facts["r"] is None


def test_a_settled_loop_is_not_widened():
    loop = While(["p"], [Const(1.0)], [], Var("t"), [], [Var("p")], ["r"])
    walk = Signs()
    walk.rounds = 5
    walk.block([loop])
    assert walk.facts["r"] == "+"


def test_bind_sees_every_fact():
    class NoNegatives(Signs):
        def bind(self, name, fact):
            self.facts[name] = None if fact == "-" else fact

    walk = NoNegatives({"x": "+"})
    walk.block([neg("a", Var("x")), If(Var("t"), [], [Const(-1.0)], [], [Const(-2.0)], ["r"])])
    assert walk.facts == {"x": "+", "a": None, "r": None}


def test_nested_loops_enter_again_each_round():
    inner = While(["i"], [Var("p")], [], Var("t"), [neg("j", Var("i"))], [Var("j")], ["i_out"])
    outer = While(["p"], [Const(1.0)], [], Var("t"), [inner], [Var("i_out")], ["r"])
    walk = Signs()
    walk.block([outer])
    assert walk.facts["r"] is None and walk.facts["i_out"] is None


def test_assignments_of_nested_blocks_in_program_order():
    block = [Assign("a", Const(1)),
             If(Var("t"), [Assign("b", Const(2))], [], [Assign("c", Const(3))], [], []),
             While([], [], [Assign("d", Const(4))], Var("d"), [Assign("e", Const(5))], [], [])]
    assert [s.target for s in assignments(block)] == ["a", "b", "c", "d", "e"]


def test_names_of_atoms():
    assert names([Var("x"), Const(2), Var("x"), Var("y")]) == {"x", "y"}
