"""The bounds yaml.v2 puts on a document before it is built, checked from the parser's events.

Nesting: go.yaml.in/yaml/v2's scanner refuses more than 10,000 nested flow collections or block indents
("exceeded max depth of 10000"). PyYAML has no bound, and its C composer recurses once per level: about
100,000 "[" crash the process.

Aliases: a few hundred bytes of nested aliases (a "billion laughs" document) expand to gigabytes. PyYAML
builds them as shared references, cheaply, but everything after it (typing, managedFields, JSON for
storage) expands them. Go's decoder counts its decode steps while it builds the value and fails once too
large a share of them come from aliases ("document contains excessive aliasing"). The same steps are
counted here without building anything: an anchored node's size is known when it ends, so an alias costs
one addition instead of a walk.
"""

from __future__ import annotations

from typing import Any

import yaml

EXCESSIVE_ALIASING = "yaml: document contains excessive aliasing"

# decode.go: up to 400,000 decode steps 99% may come from aliases; from 4,000,000 on, 10%; linear between.
_RATIO_RANGE_LOW = 400_000
_RATIO_RANGE_HIGH = 4_000_000

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# scannerc.go's max_flow_level and max_indents.
MAX_DEPTH = 10_000
# Characters that open a level (flow collections, block entries, keys): at most MAX_DEPTH of them in all
# and the document cannot be too deep, so most bodies skip the event walk.
_LEVEL_OPENERS = (b"[", b"{", b"-", b":", b"?")


class YAMLLimitError(ValueError):
    """Too deep, expanding too much through aliases, or an anchor's value containing itself."""


def _allowed_alias_ratio(decode_count: int) -> float:
    if decode_count <= _RATIO_RANGE_LOW:
        return 0.99
    if decode_count >= _RATIO_RANGE_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decode_count - _RATIO_RANGE_LOW) / (_RATIO_RANGE_HIGH - _RATIO_RANGE_LOW)


class _DecodeCounter:
    """decoder.unmarshal's decodeCount and aliasCount over the first document, in document order. An alias
    names the latest node defined with its anchor (yaml.v2 points the anchor at a node when it starts)."""

    def __init__(self) -> None:
        self.decoded = 0
        self.aliased = 0
        self.nodes = 0  # anchored nodes so far: their serial numbers
        self.latest: dict[str, int] = {}  # anchor -> the serial of its latest node
        self.sizes: dict[str, int] = {}  # anchor -> decode steps of that node (aliases inside included)
        self.open: list[
            tuple[str | None, int, int]
        ] = []  # collections not ended: (anchor, serial, steps before)
        self.open_serials: set[int] = set()

    def node(self, anchor: str | None) -> None:
        """A scalar: one step."""
        self._step(1, 0)
        if anchor is not None:
            self.latest[anchor] = self._serial()
            self.sizes[anchor] = 1

    def start(self, anchor: str | None) -> None:
        serial = self._serial()
        if anchor is not None:
            self.latest[anchor] = serial
            self.open_serials.add(serial)
        self.open.append((anchor, serial, self.decoded))
        self._step(1, 0)

    def end(self) -> None:
        anchor, serial, before = self.open.pop()
        if anchor is not None:
            self.open_serials.discard(serial)
            if self.latest[anchor] == serial:
                self.sizes[anchor] = self.decoded - before

    def alias(self, anchor: str) -> None:
        serial = self.latest.get(anchor)
        if serial in self.open_serials:
            raise YAMLLimitError(f"yaml: anchor '{anchor}' value contains itself")
        self._step(1, 0)  # the alias node itself is not inside an alias
        if serial is not None:  # an unknown anchor is the parser's error, reported by the loader
            # Every step of the expansion is an alias step: the aliased share only grows while the allowed
            # share only shrinks, so checking once at its end is checking at each step.
            size = self.sizes[anchor]
            self._step(size, size)

    def _serial(self) -> int:
        self.nodes += 1
        return self.nodes

    def _step(self, decoded: int, aliased: int) -> None:
        self.decoded += decoded
        self.aliased += aliased
        if (
            self.aliased > 100
            and self.decoded > 1000
            and self.aliased / self.decoded > _allowed_alias_ratio(self.decoded)
        ):
            raise YAMLLimitError(EXCESSIVE_ALIASING)


def check(body: bytes | str) -> None:
    """Raises YAMLLimitError where yaml.v2 would refuse the first document for its depth or its aliases.
    Syntax errors are left to the loader."""
    data = body.encode() if isinstance(body, str) else body
    aliases = b"*" in data and b"&" in data  # no alias without an anchor
    if aliases or sum(data.count(opener) for opener in _LEVEL_OPENERS) > MAX_DEPTH:
        _walk(data, _DecodeCounter() if aliases else None)


def _walk(data: bytes, counter: _DecodeCounter | None) -> None:
    flow: list[bool] = []  # the open collections, flow style or not
    depths = {True: 0, False: 0}  # open flow collections, open block collections
    loader: Any = _Loader(data)
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                style = bool(event.flow_style)
                flow.append(style)
                depths[style] += 1
                if depths[style] > MAX_DEPTH:
                    line = event.start_mark.line
                    where = f"line {line + 1}: " if line else ""
                    raise YAMLLimitError(f"yaml: {where}exceeded max depth of {MAX_DEPTH}")
            elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                depths[flow.pop()] -= 1
            elif isinstance(event, yaml.DocumentEndEvent):
                return  # Go decodes the first document only
            if counter is not None:
                _count(counter, event)
    except yaml.YAMLError:
        return
    finally:
        loader.dispose()


def _count(counter: _DecodeCounter, event: Any) -> None:
    if isinstance(event, yaml.DocumentStartEvent):
        counter.start(None)  # the document node is a step too
    elif isinstance(event, yaml.ScalarEvent):
        counter.node(event.anchor)
    elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
        counter.start(event.anchor)
    elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
        counter.end()
    elif isinstance(event, yaml.AliasEvent):
        counter.alias(event.anchor)
