"""The README's "Testing against it" example, run as written: its python block saved as a test file in a
directory of its own and run by pytest in a subprocess, with the plugin the installed package registers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Testing against it"


def readme_block() -> str:
    text = README.read_text()
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", 1)]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_testing_example_passes_as_written(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")  # its own rootdir: not this repository's configuration
    (project / "test_example.py").write_text(readme_block())
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--basetemp", str(tmp_path / "t")],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert re.search(r"\b1 passed\b", output.strip().splitlines()[-1]), output[-4000:]
