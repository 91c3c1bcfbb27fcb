"""Helpers for the CEL tests: evaluate an expression, or get the error it raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kube_apiserver import cel


def _evaluate(expression: str, **variables: Any) -> Any:
    return cel.compile(expression, variables=variables).evaluate(variables)


def _error(expression: str, **variables: Any) -> str:
    with pytest.raises(cel.EvaluationError) as caught:
        _evaluate(expression, **variables)
    return str(caught.value)


@pytest.fixture
def ev() -> Callable[..., Any]:
    return _evaluate


@pytest.fixture
def err() -> Callable[..., str]:
    return _error
