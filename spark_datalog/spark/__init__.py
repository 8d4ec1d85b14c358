"""The Spark backend: IR -> DataFrame compiler, input checking, session helpers."""

from .compile import compile_node
from .inputs import prepare_inputs
from .session import local_session

__all__ = ["compile_node", "prepare_inputs", "local_session"]
