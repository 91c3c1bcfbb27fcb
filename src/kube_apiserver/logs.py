"""klog-style logging on top of Python `logging`.

Every record is written to stderr as klog's text header and message:

    I1121 18:55:00.123456   12345 server.py:123] message

(severity I/W/E/F, MMDD, local time with microseconds, pid right-aligned in 7 columns, file:line).
Verbosity works like klog's -v: `info_v(2, ...)` (klog.V(2).Info) is emitted only when
`setup(verbosity)` was given 2 or more. Python DEBUG records are treated as V(4).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any, NoReturn

DEBUG_VERBOSITY = 4  # the -v level at which Python DEBUG records are emitted

logger = logging.getLogger("kube_apiserver")

_state = {"verbosity": 0}
_HANDLER_MARK = "_klog_handler"


def _severity(levelno: int) -> str:
    if levelno >= logging.CRITICAL:
        return "F"
    if levelno >= logging.ERROR:
        return "E"
    if levelno >= logging.WARNING:
        return "W"
    return "I"


class KlogFormatter(logging.Formatter):
    """Formats records with klog's header."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            message += "\n" + self.formatStack(record.stack_info)
        return self.header(record) + message

    @staticmethod
    def header(record: logging.LogRecord) -> str:
        stamp = time.localtime(record.created)
        micros = int((record.created % 1) * 1_000_000)
        return (
            f"{_severity(record.levelno)}{time.strftime('%m%d %H:%M:%S', stamp)}.{micros:06d} "
            f"{record.process or os.getpid():>7} {record.filename}:{record.lineno}] "
        )


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at emit time (like logging.lastResort)."""

    def __init__(self) -> None:
        super().__init__()
        setattr(self, _HANDLER_MARK, True)
        self.setFormatter(KlogFormatter())

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def reset() -> None:
    """Removes the handler installed by setup() and sets the verbosity back to 0."""
    _state["verbosity"] = 0
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, _HANDLER_MARK, False)]:
        root.removeHandler(handler)


def setup(verbosity: int = 0) -> None:
    """Sends all logging (root logger) to stderr in klog format, at the given -v verbosity."""
    reset()
    _state["verbosity"] = verbosity
    root = logging.getLogger()
    root.addHandler(_StderrHandler())
    root.setLevel(logging.DEBUG if verbosity >= DEBUG_VERBOSITY else logging.INFO)


def verbosity() -> int:
    return _state["verbosity"]


def set_verbosity(level: int) -> None:
    """-v at run time (PUT /debug/flags/v): the process's logging, as klog's, is one for every server in it."""
    _state["verbosity"] = level
    logging.getLogger().setLevel(logging.DEBUG if level >= DEBUG_VERBOSITY else logging.INFO)


def V(level: int) -> bool:  # noqa: N802 - klog's name
    """klog.V(level).Enabled(): whether messages at this verbosity are logged."""
    return _state["verbosity"] >= level


def info_v(level: int, msg: str, *args: Any) -> None:
    """klog.V(level).Infof: logs `msg % args` at INFO when -v >= level (file:line of the caller)."""
    if V(level):
        logger.info(msg, *args, stacklevel=2)


def info(msg: str, *args: Any) -> None:
    logger.info(msg, *args, stacklevel=2)


def warning(msg: str, *args: Any) -> None:
    logger.warning(msg, *args, stacklevel=2)


def error(msg: str, *args: Any) -> None:
    logger.error(msg, *args, stacklevel=2)


def fatal(msg: str, *args: Any) -> NoReturn:
    """klog.Fatalf: logs with severity F and exits with status 255."""
    logger.critical(msg, *args, stacklevel=2)
    logging.shutdown()
    raise SystemExit(255)
