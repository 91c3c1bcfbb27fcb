"""File path rules shared by volumes and mounts (validateLocalDescendingPath and friends)."""

from __future__ import annotations

from ....apimachinery import field
from ....apimachinery.field import ErrorList, Path

FILE_MODE_ERROR = "must be a number between 0 and 0777 (octal), both inclusive"


def no_backsteps(target: str, path: Path) -> ErrorList:
    """validatePathNoBacksteps."""
    if ".." in target.replace("\\", "/").split("/"):
        return [field.invalid(path, target, "must not contain '..'")]
    return []


def local_descending(target: str, path: Path) -> ErrorList:
    """validateLocalDescendingPath: relative, without `..` elements."""
    errs: ErrorList = []
    if target.startswith("/"):
        errs.append(field.invalid(path, target, "must be a relative path"))
    return errs + no_backsteps(target, path)


def local_non_reserved(target: str, path: Path) -> ErrorList:
    """ValidateLocalNonReservedPath: also may not start with `..`."""
    errs = local_descending(target, path)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(field.invalid(path, target, "must not start with '..'"))
    return errs


def file_mode(mode: object, path: Path) -> ErrorList:
    if isinstance(mode, int) and not 0 <= mode <= 0o777:
        return [field.invalid(path, mode, FILE_MODE_ERROR)]
    return []
