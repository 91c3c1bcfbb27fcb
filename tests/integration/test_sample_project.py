"""examples/sample-project run as its user runs it: `python -m pytest` in its directory, with nothing from this
repository's tests (its servers come from the installed pytest plugin). Every one of its tests passes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sample-project"
SAMPLE_TESTS = 7  # the operator, two webhooks, two RBAC checks, the controller against conflicts and a drop


def test_the_sample_projects_tests_all_pass(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("KUBECONFIG", None)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rfE",
            "--basetemp",
            str(tmp_path / "t"),
        ],
        cwd=SAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    summary = output.strip().splitlines()[-1]
    assert re.search(rf"\b{SAMPLE_TESTS} passed\b", summary), output[-6000:]
    assert not re.search(r"failed|error|skipped", summary), summary
