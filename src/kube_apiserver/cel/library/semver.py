"""Kubernetes' semver library (version 1): semver, isSemver (both with the optional `normalize`
argument), major, minor, patch, isGreaterThan, isLessThan, compareTo. Parsing and ordering follow
blang/semver v4 and its error texts. A Semver value is tagged with its text without build metadata,
which equality (Version.EQ) ignores."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from kube_apiserver.cel.errors import LibraryError, NoSuchOverload
from kube_apiserver.cel.values import SEMVER, tag, untag

_NUMBERS = re.compile(r"[0-9]*")
_ALPHANUM = re.compile(r"[0-9A-Za-z-]*")
UINT_MAX = 2**64 - 1


class Version(NamedTuple):
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...]

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        return text + ("-" + ".".join(map(str, self.pre)) if self.pre else "")


def _uint(text: str) -> int:
    if not text or int(text) > UINT_MAX:
        raise LibraryError(f'strconv.ParseUint: parsing "{text}": '
                           + ("invalid syntax" if not text else "value out of range"))
    return int(text)


def _number(text: str, name: str) -> int:
    if not _NUMBERS.fullmatch(text):
        raise LibraryError(f'Invalid character(s) found in {name} number "{text}"')
    if len(text) > 1 and text[0] == "0":
        raise LibraryError(f'{name.capitalize()} number must not contain leading zeroes "{text}"')
    return _uint(text)


def _prerelease(text: str) -> int | str:
    if not text:
        raise LibraryError("Prerelease is empty")
    if _NUMBERS.fullmatch(text):
        if len(text) > 1 and text[0] == "0":
            raise LibraryError(f'Numeric PreRelease version must not contain leading zeroes "{text}"')
        return _uint(text)
    if _ALPHANUM.fullmatch(text):
        return text
    raise LibraryError(f'Invalid character(s) found in prerelease "{text}"')


@functools.lru_cache(maxsize=1024)  # rules parse the same few versions over and over
def parse(text: str) -> Version:
    """semver.Parse."""
    if not text:
        raise LibraryError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise LibraryError("No Major.Minor.Patch elements found")
    major, minor = _number(parts[0], "major"), _number(parts[1], "minor")
    patch, _, build = parts[2].partition("+")
    patch, dash, pre = patch.partition("-")
    number = _number(patch, "patch")
    prerelease = tuple(_prerelease(item) for item in pre.split(".")) if dash else ()
    if "+" in parts[2]:
        for item in build.split("."):
            if not item:
                raise LibraryError("Build meta data is empty")
            if not _ALPHANUM.fullmatch(item):
                raise LibraryError(f'Invalid character(s) found in build meta data "{item}"')
    return Version(major, minor, number, prerelease)


def normalize_and_parse(text: str) -> Version:
    """normalizeAndParse: drop a leading "v", leading zeros, and pad missing minor/patch with 0."""
    parts = text.removeprefix("v").split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or not part[0].isdigit():
                part = "0" + part
            parts[index] = part
    if len(parts) < 3:
        if any(ch in parts[-1] for ch in "+-"):
            raise LibraryError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse(".".join(parts))


def _key(part: int | str) -> tuple[int, int | str]:
    # numeric identifiers sort before alphanumeric ones
    return (0, part) if isinstance(part, int) else (1, part)


def compare(a: Version, b: Version) -> int:
    """Version.Compare."""
    if a[:3] != b[:3]:
        return 1 if a[:3] > b[:3] else -1
    if not a.pre or not b.pre:
        return (not a.pre) - (not b.pre)
    for x, y in zip(a.pre, b.pre, strict=False):
        if x != y:
            return 1 if _key(x) > _key(y) else -1
    return (len(a.pre) > len(b.pre)) - (len(a.pre) < len(b.pre))


def _parse_arg(text: Any, normalize: Any) -> Version:
    if type(text) is not str or type(normalize) is not bool:
        raise NoSuchOverload()
    return normalize_and_parse(text) if normalize else parse(text)


def semver(text: Any, normalize: Any = False) -> dict[str, str]:
    return tag(SEMVER, str(_parse_arg(text, normalize)))


def is_semver(text: Any, normalize: Any = False) -> bool:
    try:
        _parse_arg(text, normalize)
    except NoSuchOverload:
        raise
    except LibraryError:
        return False
    return True


def value_of(value: Any) -> Version:
    return parse(untag(value, SEMVER))


def compare_to(value: Any, other: Any) -> int:
    return compare(value_of(value), value_of(other))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "semver": semver,
    "isSemver": is_semver,
    "major": lambda value: value_of(value).major,
    "minor": lambda value: value_of(value).minor,
    "patch": lambda value: value_of(value).patch,
    "isGreaterThan": lambda value, other: compare_to(value, other) == 1,
    "isLessThan": lambda value, other: compare_to(value, other) == -1,
    "compareTo": compare_to,
}
