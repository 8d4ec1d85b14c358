"""The functions tests/dialect/user_functors_recursive/prog.dl binds with --functor."""


def total(items):
    result = 0
    while items is not None:  # nil is None
        result += items[0]
        items = items[1]
    return result


def reversed_(items):
    out = None
    while items is not None:
        out = (items[0], out)  # a record as any sequence of its fields
        items = items[1]
    return out


def evaluate(expr):
    branch = expr[0]
    if branch == "Num":
        return expr[1]
    if branch == "Neg":
        return -evaluate(expr[1])
    return evaluate(expr[1]) + evaluate(expr[2])


def simplified(expr):
    """Double negations removed."""
    if expr[0] == "Neg" and expr[1][0] == "Neg":
        return simplified(expr[1][1])
    if expr[0] == "Neg":
        return ("Neg", simplified(expr[1]))
    if expr[0] == "Add":
        return ("Add", simplified(expr[1]), simplified(expr[2]))
    return expr


def tagged(name, items):
    return [name.upper(), items]
