"""Nothing is traced here: no value is a box."""


def isbox(x) -> bool:
    return False
