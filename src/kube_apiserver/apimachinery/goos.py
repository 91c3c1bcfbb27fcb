"""Operating-system errors worded as Go's os package words them ("open /x: permission denied"), so a
command's failure reads as kube-apiserver's does and never as a Python repr ("[Errno 13] ...")."""

from __future__ import annotations


def _reason(err: OSError) -> str:
    reason = err.strerror or str(err)
    return reason[:1].lower() + reason[1:]


def os_error_text(op: str, path: str, err: OSError) -> str:
    """Go's *PathError text: "<op> <path>: <lower-case reason>"."""
    return f"{op} {path}: {_reason(err)}"


def os_error_message(err: OSError) -> str:
    """One line for any OSError: "<path>: <reason>" when it names a file (Python does not record the
    operation), the bare reason when it has an errno, else its own message."""
    if err.filename is not None:
        paths = f"{err.filename} {err.filename2}" if err.filename2 is not None else str(err.filename)
        return f"{paths}: {_reason(err)}"
    if err.errno is not None and err.strerror:
        return _reason(err)
    return str(err)
