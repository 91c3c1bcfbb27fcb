"""The --workers storage process raises its priority above its workers' only where the operating system lets
it; a refusal leaves it serving at theirs."""

from __future__ import annotations

import logging

import pytest

from kube_apiserver import logs
from kube_apiserver.cmd import workers


def test_a_refused_priority_is_said_at_v2_and_the_process_goes_on(monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    asked: list[int] = []

    def refuse(increment: int) -> int:
        asked.append(increment)
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(workers.os, "nice", refuse)
    level = logs.verbosity()
    logs.set_verbosity(2)
    try:
        with caplog.at_level(logging.INFO):
            workers._favor_storage()
    finally:
        logs.set_verbosity(level)
    assert asked == [-workers.STORAGE_PRIORITY_BOOST]
    assert "keeps its workers' scheduling priority: [Errno 1] Operation not permitted" in caplog.text
