"""The functions tests/dialect/user_functors/prog.dl binds with --functor."""

from spark_datalog import vectorized


def label(name, qty):
    return f"{name}#{qty}"


@vectorized
def scale(x, k):  # pandas Series in, a Series out
    return x * k


def parity(n):
    return None if n < 0 else n % 2
