"""Choose the commit path: native delta-spark when its jar is loadable, embedded delta-rs otherwise."""

from __future__ import annotations

from typing import Optional

from ..errors import WarehouseError

DELTA_TABLE_CLASS = "io.delta.tables.DeltaTable"
BACKENDS = ("auto", "native", "embedded")
# The session's default commit path for warehouses that do not name one (``auto`` when unset).
BACKEND_SETTING = "spark.datalog.warehouse.backend"


def delta_jar_available(spark) -> bool:
    """True when the delta-spark classes can be loaded by the session's JVM.

    Probes with ``Utils.classIsLoadable``: attribute access on ``spark._jvm.io.delta...`` returns a
    py4j placeholder even for a missing class, so it proves nothing. Spark Connect sessions have
    no ``_jvm``; there the native path is not detected (choose it explicitly with
    ``backend="native"`` when the server has Delta).
    """
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return False
    try:
        return bool(jvm.org.apache.spark.util.Utils.classIsLoadable(DELTA_TABLE_CLASS))
    except Exception:  # a stopped JVM or a py4j error: treat as absent, the embedded path works
        return False


def delta_python_available() -> bool:
    """True when the ``delta`` Python package (delta-spark's bindings) can be imported."""
    try:
        import delta.tables  # noqa: F401
    except ImportError:
        return False
    return True


def configured_backend(spark) -> str:
    """The session's ``spark.datalog.warehouse.backend`` setting, ``"auto"`` when unset (or
    without a session)."""
    conf = getattr(spark, "conf", None)
    if conf is None:
        return "auto"
    try:
        return str(conf.get(BACKEND_SETTING, "auto") or "auto").strip().lower()
    except Exception:  # a stopped session: the default
        return "auto"


def choose_backend(spark, backend: Optional[str] = None) -> str:
    """``"native"`` or ``"embedded"``: ``auto`` picks native only when both jar and bindings
    exist; ``None`` means the session's ``spark.datalog.warehouse.backend`` (default ``auto``).

    Raises ``WarehouseError`` when ``native`` is asked for and the jar is not loadable.

    Example::

        choose_backend(spark)               # 'native' with the delta-spark jar loaded
        choose_backend(spark, "embedded")   # 'embedded'
    """
    backend = backend or configured_backend(spark)
    if backend not in BACKENDS:
        raise WarehouseError(
            f"unknown warehouse backend {backend!r} (expected one of {', '.join(BACKENDS)}; "
            f"from the backend argument or {BACKEND_SETTING})"
        )
    if backend == "embedded":
        return "embedded"
    native = delta_jar_available(spark) and delta_python_available()
    if backend == "native":
        if getattr(spark, "_jvm", None) is None and delta_python_available():
            return "native"  # Spark Connect: trust the caller, the server may have Delta
        if not native:
            raise WarehouseError(
                f"backend='native' needs the delta-spark jar on the classpath "
                f"({DELTA_TABLE_CLASS} is not loadable) and the delta-spark "
                f"Python package"
            )
        return "native"
    return "native" if native else "embedded"
