"""The cel-rust interpreter (package `cel`), imported on first use: importing it also imports its REPL
(prompt_toolkit), a quarter of a second no server start should pay when nothing uses CEL yet."""

from __future__ import annotations

import functools
from types import ModuleType


@functools.cache
def interpreter() -> ModuleType:
    import cel

    return cel
