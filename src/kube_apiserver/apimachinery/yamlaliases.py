"""yaml.v2's bound on alias expansion ("yaml: document contains excessive aliasing").

A few hundred bytes of nested aliases (a "billion laughs" document) expand to gigabytes. PyYAML builds them
as shared references, cheaply, but everything after it (typing, managedFields, JSON for storage) expands
them. Go's decoder (sigs.k8s.io/yaml on go.yaml.in/yaml/v2) counts its decode steps while it builds the
value and fails once too large a share of them come from aliases. This module counts the same steps from
the parser's events, without building anything: an anchored node's size is known when it ends, so an alias
costs one addition instead of a walk.
"""

from __future__ import annotations

from typing import Any

import yaml

EXCESSIVE_ALIASING = "yaml: document contains excessive aliasing"

# decode.go: up to 400,000 decode steps 99% may come from aliases; from 4,000,000 on, 10%; linear between.
_RATIO_RANGE_LOW = 400_000
_RATIO_RANGE_HIGH = 4_000_000

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class AliasingError(ValueError):
    """The document expands too much through its aliases, or an anchor's value contains itself."""


def _allowed_alias_ratio(decode_count: int) -> float:
    if decode_count <= _RATIO_RANGE_LOW:
        return 0.99
    if decode_count >= _RATIO_RANGE_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decode_count - _RATIO_RANGE_LOW) / (_RATIO_RANGE_HIGH - _RATIO_RANGE_LOW)


class _DecodeCounter:
    """decoder.unmarshal's decodeCount and aliasCount over the first document, in document order."""

    def __init__(self) -> None:
        self.decoded = 0
        self.aliased = 0
        self.sizes: dict[str, int] = {}  # anchor -> decode steps of its node (aliases inside included)
        self.open: list[tuple[str | None, int]] = []  # collections not ended yet: (anchor, steps before it)

    def node(self, anchor: str | None) -> None:
        """A scalar: one step."""
        self._step(1, 0)
        if anchor is not None:
            self.sizes[anchor] = 1

    def start(self, anchor: str | None) -> None:
        self.open.append((anchor, self.decoded))
        self._step(1, 0)

    def end(self) -> None:
        anchor, before = self.open.pop()
        if anchor is not None:
            self.sizes[anchor] = self.decoded - before

    def alias(self, anchor: str) -> None:
        if any(name == anchor for name, _ in self.open):
            raise AliasingError(f"yaml: anchor '{anchor}' value contains itself")
        self._step(1, 0)  # the alias node itself is not inside an alias
        size = self.sizes.get(anchor)
        if size is not None:  # an unknown anchor is the parser's error, reported by the loader
            # Every step of the expansion is an alias step: the aliased share only grows while the allowed
            # share only shrinks, so checking once at its end is checking at each step.
            self._step(size, size)

    def _step(self, decoded: int, aliased: int) -> None:
        self.decoded += decoded
        self.aliased += aliased
        if (
            self.aliased > 100
            and self.decoded > 1000
            and self.aliased / self.decoded > _allowed_alias_ratio(self.decoded)
        ):
            raise AliasingError(EXCESSIVE_ALIASING)


def check_aliasing(body: bytes | str) -> None:
    """Raises AliasingError where yaml.v2 would refuse the first document for its aliases. Syntax errors
    are left to the loader."""
    marker = b"*" if isinstance(body, bytes) else "*"
    anchor = b"&" if isinstance(body, bytes) else "&"
    if marker not in body or anchor not in body:  # no alias without an anchor: the common case costs nothing
        return
    counter = _DecodeCounter()
    loader: Any = _Loader(body)
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.DocumentStartEvent):
                counter.start(None)  # the document node is a step too
            elif isinstance(event, yaml.DocumentEndEvent):
                return  # Go decodes the first document only
            elif isinstance(event, yaml.ScalarEvent):
                counter.node(event.anchor)
            elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                counter.start(event.anchor)
            elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                counter.end()
            elif isinstance(event, yaml.AliasEvent):
                counter.alias(event.anchor)
    except yaml.YAMLError:
        return
    finally:
        loader.dispose()
