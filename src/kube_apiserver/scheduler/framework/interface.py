"""The plugin interface (framework.FilterPlugin, ScorePlugin and their pre-steps): a plugin overrides
what it takes part in; `weight` is its score's weight in the default profile."""

from __future__ import annotations

from typing import Any

from .nodeinfo import NodeInfo
from .types import SKIP, SUCCESS, CycleState, Status

Object = dict[str, Any]


class Plugin:
    name = ""
    weight = 0  # 0: not a score plugin
    filters = True

    def pre_filter(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        return SUCCESS

    def filter(self, state: CycleState, pod: Object, node: NodeInfo) -> Status:
        return SUCCESS

    def pre_score(self, state: CycleState, pod: Object, nodes: list[NodeInfo]) -> Status:
        return SUCCESS if self.weight else SKIP

    def score(self, state: CycleState, pod: Object, node: NodeInfo) -> int:
        return 0

    def normalize_scores(self, state: CycleState, pod: Object, scores: dict[str, int]) -> None:
        """NormalizeScore: brings the scores into 0..MAX_NODE_SCORE, in place."""
