"""Records built without their ``__init__``.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``. A hot record
(millions for a large program) can be built instead in a mutable *twin* class with the same
slots, which then becomes the record's class by ``__class__`` assignment (allowed between classes
of the same layout): the same object, built in a third of the time. Every field must be set.
"""

from __future__ import annotations

from typing import Any


def twin(cls) -> Any:
    """A mutable class with the slots of the slotted dataclass ``cls``."""
    return type("_Mutable" + cls.__name__, (), {"__slots__": cls.__slots__})
