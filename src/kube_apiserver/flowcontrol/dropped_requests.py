"""The Retry-After of a rejected request (k8s.io/apiserver pkg/util/flowcontrol/dropped_requests_tracker.go):
1 second, doubled (up to 32) while a priority level keeps dropping at least 3 x Retry-After requests within
the last Retry-After seconds, and lowered by one once it drops fewer than Retry-After; so clients told to come
back do not all come back at once."""

from __future__ import annotations

import time
from collections.abc import Callable

MAX_RETRY_AFTER = 32


class _LevelDrops:
    def __init__(self) -> None:
        self.history: list[tuple[int, int]] = []  # (unix second, requests dropped in it), oldest first
        self.current_unix = 0
        self.current_count = 0
        self.retry_after = 1
        self.retry_after_updated = 0

    def record(self, unix: int) -> None:
        if unix == self.current_unix:
            self.current_count += 1
            return
        self._update_history(self.current_unix, self.current_count)
        self.current_unix, self.current_count = unix, 1
        self._update_retry_after(unix)

    def _update_history(self, unix: int, count: int) -> None:
        self.history.append((unix, count))
        kept = min(2 * self.retry_after, MAX_RETRY_AFTER)
        self.history = [entry for entry in self.history if unix - entry[0] <= kept]

    def _update_retry_after(self, unix: int) -> None:
        dropped = sum(
            count for second, count in self.history if unix - second <= self.retry_after and second < unix
        )
        if unix - self.retry_after_updated >= self.retry_after and dropped >= 3 * self.retry_after:
            self.retry_after = min(self.retry_after * 2, MAX_RETRY_AFTER)
            self.retry_after_updated = unix
        elif dropped < self.retry_after and self.retry_after > 1:
            self.retry_after -= 1


class DroppedRequestsTracker:
    def __init__(self, now: Callable[[], float] = time.time):
        self.now = now
        self.levels: dict[str, _LevelDrops] = {}

    def record_dropped_request(self, level: str) -> None:
        self.levels.setdefault(level, _LevelDrops()).record(int(self.now()))

    def retry_after(self, level: str) -> int:
        drops = self.levels.get(level)
        return drops.retry_after if drops is not None else 1
