"""examples/go-kubeconfig run as its user runs it: `go test ./...` in its directory, against a server the Go
test starts itself and reaches through the admin kubeconfig (the standard library only: no module is
downloaded). Skipped where no Go toolchain is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "go-kubeconfig"


@pytest.mark.skipif(shutil.which("go") is None, reason="no Go toolchain")
def test_the_go_examples_tests_pass(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "KUBE_APISERVER_PYTHON": sys.executable,
        "GOPROXY": "off",  # nothing to download: the example needs none
        "GOFLAGS": "-mod=mod",
        "GOPATH": str(tmp_path / "gopath"),
    }
    env.setdefault("GOCACHE", str(tmp_path / "gocache"))
    result = subprocess.run(
        ["go", "test", "-count=1", "-v", "./..."],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    for name in ("TestCreateReadAndConflict", "TestAWatchSeesTheCreate", "TestAListInPages"):
        assert f"--- PASS: {name}" in output, output[-6000:]
