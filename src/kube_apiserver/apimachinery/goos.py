"""Operating-system errors worded as Go's os package words them ("open /x: permission denied"), so a
command's failure reads as kube-apiserver's does and never as a Python repr ("[Errno 13] ...")."""

from __future__ import annotations

import os


def reason(err: OSError) -> str:
    """The error's reason as Go's syscall.Errno words it: the C library's text, lower-cased at the start
    ("permission denied", "address already in use")."""
    return _lower_first(err.strerror or str(err))


def errno_text(err: OSError) -> str:
    """The reason taken from the errno alone, not the exception's own text: asyncio's connect puts the address
    there ("Connect call failed ('10.0.0.7', 443)") where Go says "connection refused"."""
    return _lower_first(os.strerror(err.errno)) if err.errno else reason(err)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def os_error_text(op: str, path: str, err: OSError) -> str:
    """Go's *PathError text: "<op> <path>: <lower-case reason>"."""
    return f"{op} {path}: {reason(err)}"


def os_error_message(err: OSError) -> str:
    """One line for any OSError: "<path>: <reason>" when it names a file (Python does not record the
    operation), the bare reason when it has an errno, else its own message."""
    if err.filename is not None:
        paths = f"{err.filename} {err.filename2}" if err.filename2 is not None else str(err.filename)
        return f"{paths}: {reason(err)}"
    if err.errno is not None and err.strerror:
        return reason(err)
    return str(err)
