"""docs/testing.md's Python examples: the first block (the library) runs as written in a subprocess; every
other block is an excerpt of examples/sample-project (whose tests test_sample_project.py runs), line for
line, so the guide cannot drift from code that runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "testing.md"
SAMPLE = ROOT / "examples" / "sample-project"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)


def test_the_guides_library_example_runs_as_written(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("KUBECONFIG", None)
    result = subprocess.run(
        [sys.executable, "-c", python_blocks()[0]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert re.match(r"https://127\.0\.0\.1:\d+ \S+/admin\.kubeconfig$", result.stdout.strip()), result.stdout


def test_the_guides_other_examples_are_the_sample_projects_code() -> None:
    sources = {path: path.read_text() for path in SAMPLE.rglob("*.py")}
    blocks = python_blocks()[1:]
    assert len(blocks) >= 6
    for block in blocks:
        # its lines, consecutive and exactly as written (indentation included), in one of the files
        found = [path for path, text in sources.items() if block.rstrip("\n") in text]
        assert found, f"not an excerpt of examples/sample-project:\n{block}"
