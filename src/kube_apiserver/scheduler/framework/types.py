"""The framework's vocabulary (pkg/scheduler/framework): a plugin's Status, the per-attempt CycleState,
and the score normalization plugins share."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

Object = dict[str, Any]
MAX_NODE_SCORE = 100
ALL_NODES = "AllNodes"  # CycleState key: every node of the cycle, not only the feasible ones


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2  # preemption might help
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3  # preemption would not help
    SKIP = 5


@dataclass(frozen=True)
class Status:
    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def message(self) -> str:
        return ", ".join(self.reasons)


SUCCESS = Status(Code.SUCCESS)
SKIP = Status(Code.SKIP)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


@dataclass
class CycleState:
    """What PreFilter and PreScore computed for one pod's attempt, read by Filter and Score."""

    data: dict[str, Any] = field(default_factory=dict)
    # PreFilterResult: the only nodes worth filtering, by the plugin that knows (NodeAffinity's
    # matchFields on metadata.name); the rest are rejected without running the filters.
    node_names: dict[str, set[str]] = field(default_factory=dict)


def default_normalize_score(scores: dict[str, int], reverse: bool = False) -> None:
    """helper.DefaultNormalizeScore: scaled so the highest is MAX_NODE_SCORE (reversed: the lowest)."""
    highest = max(scores.values(), default=0)
    if highest == 0:
        if reverse:
            for name in scores:
                scores[name] = MAX_NODE_SCORE
        return
    for name, score in scores.items():
        scaled = MAX_NODE_SCORE * score // highest
        scores[name] = MAX_NODE_SCORE - scaled if reverse else scaled
