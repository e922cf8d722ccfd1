"""Reading generated code back in: which names a block reads before binding them (`relower._read_first`),
decided for all names in one walk."""
import gast

from s2sgrad.frontend.relower import _bound_then_read, _read_first


def block(text: str) -> list:
    return gast.parse(text).body


def test_read_first_and_bound_first():
    code = block("a = b\nif t:\n    c = 1\nelse:\n    c = 2\n    d = c\nwhile u:\n    e = 1\nf = e + a\ng += 1\n")
    read, bound = _read_first(code, {"a", "b", "c", "d", "e", "f", "g", "t", "u", "z"})
    assert read == {"b", "t", "u", "e", "g"}          # e: the loop may bind it, or not run
    assert bound == {"a", "c", "f"}                    # d is bound on one path only: neither


def test_a_name_bound_in_one_branch_then_read_starts_as_none():
    code = block("if t:\n    y = 1\nz = y\nif s:\n    w = 1\nw = 2\nv = w\n")
    assert _bound_then_read(code, set()) == {"y"}      # w is bound again before it is read
