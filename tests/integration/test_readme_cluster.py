"""The README's "A cluster that moves", run as written (its own data directory and port): a server with three
simulated nodes, then kubectl rolls a Deployment out, updates and undoes it, runs a Job to completion,
lists a Service's EndpointSlices and drains a node."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import wait_for
from etcd import free_port

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## A cluster that moves"


def readme_block() -> str:
    text = README.read_text()
    section = text[text.index(SECTION) :]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def script_for(block: str, root: Path, port: int) -> str:
    """The block with its own data directory and port (the server left running)."""
    data = root / "data"
    server = f"{sys.executable} -m kube_apiserver --data-dir {data} --secure-port {port}"
    script = block.replace("kube-apiserver --simulated-nodes", f"{server} --simulated-nodes", 1)
    script = script.replace("~/.local/share/kube-apiserver", str(data))
    return "set -e\n" + script.replace(" &\n", f" >{root}/server.log 2>&1 &\n", 1)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_the_readme_cluster_block_runs_as_written(tmp_path: Path) -> None:
    script = script_for(readme_block(), tmp_path, free_port())
    env = {**os.environ, "HOME": str(tmp_path)}
    proc = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    try:
        out = _run(proc)
        assert proc.returncode == 0, out + (tmp_path / "server.log").read_text()[-3000:]
        assert 'deployment "web" successfully rolled out' in out
        assert "deployment.apps/web rolled back" in out
        assert "job.batch/once condition met" in out
        assert "node/sim-node-0 drained" in out
        kubeconfig = tmp_path / "data" / "admin.kubeconfig"
        wait_for(lambda: _ready_slice_addresses(kubeconfig) == 3, 60)
    finally:
        _stop_server(tmp_path / "data")
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _run(proc: subprocess.Popen) -> str:
    """The script's output once it has ended (the server it started keeps running)."""
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("node/sim-node-0 drained"):
            break
    proc.wait(120)
    return "".join(lines)


def _ready_slice_addresses(kubeconfig: Path) -> int:
    listed = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "get", "endpointslices", "-l",
                             "kubernetes.io/service-name=web", "-o", "json"], capture_output=True, text=True)
    if listed.returncode:
        return -1
    return sum(len(e["addresses"]) for s in json.loads(listed.stdout)["items"] for e in s.get("endpoints") or []
               if e["conditions"].get("ready"))


def _stop_server(data: Path) -> None:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(data).encode() in argv and b"kube_apiserver" in argv:
                os.kill(int(entry), signal.SIGTERM)
