"""The README's "Three replicas behind one address", run as written on a fresh etcd (its own ports and
directories): three processes started at once share one data directory and one port; they agree on the
credentials (a token one replica issues is accepted by all), the `kubernetes` endpoints list the three
advertise addresses, and the address keeps serving when one replica is killed."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import wait_for
from etcd import free_port

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "### Three replicas behind one address"
REPLICA_ADDRESSES = ["192.0.2.1", "192.0.2.2", "192.0.2.3"]


def readme_block() -> str:
    text = README.read_text()
    section = text[text.index(SECTION) :]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def script_for(block: str, etcd_url: str, root: Path, port: int) -> str:
    """The block with its own etcd (the fixture's), directories and port."""
    lines = [line for line in block.splitlines() if not line.startswith("etcd ")]
    script = "\n".join(lines)
    script = script.replace("http://127.0.0.1:2379", etcd_url).replace("/tmp/", f"{root}/")
    return script.replace("--permit-port-sharing", f"--permit-port-sharing --secure-port={port}")


def replica_pids(root: Path) -> dict[str, int]:
    """advertise address -> pid of the kube-apiserver processes whose data dir is under root."""
    found: dict[str, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if str(root / "kube-ha") not in argv:
            continue
        address = next((a.split("=", 1)[1] for a in argv if a.startswith("--advertise-address=")), None)
        if address is not None and any("kube-apiserver" in a for a in argv[:2]):
            found[address] = int(entry)
    return found


class Kubectl:
    def __init__(self, kubeconfig: Path):
        self.kubeconfig = str(kubeconfig)

    def __call__(self, *args: str, token: str = "") -> subprocess.CompletedProcess[str]:
        argv = ["kubectl", "--kubeconfig", self.kubeconfig, *args]
        if token:
            argv += ["--token", token]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def endpoint_ips(kubectl: Kubectl) -> list[str]:
    out = kubectl("get", "endpoints", "kubernetes", "-o", "jsonpath={.subsets[*].addresses[*].ip}")
    return sorted(out.stdout.split()) if out.returncode == 0 else []


@pytest.fixture
def readme_replicas(etcd: Any, tmp_path: Path, kubectl_available: None) -> Any:
    port = free_port()
    script = script_for(readme_block(), etcd.endpoints, tmp_path, port)
    shell = subprocess.Popen(
        ["bash", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = shell.communicate(timeout=180)
        logs = "".join((tmp_path / f"kube-ha-{i}.log").read_text() for i in (1, 2, 3))
        assert shell.returncode == 0, output + logs
        assert "kubernetes" in output
        yield tmp_path, Kubectl(tmp_path / "kube-ha" / "admin.kubeconfig")
    finally:
        for pid in replica_pids(tmp_path).values():
            os.kill(pid, signal.SIGKILL)
        if shell.poll() is None:
            os.killpg(shell.pid, signal.SIGKILL)


def test_the_readme_runs_three_replicas_behind_one_address(readme_replicas: Any):
    root, kubectl = readme_replicas
    assert sorted(replica_pids(root)) == REPLICA_ADDRESSES  # all three alive on the one port
    wait_for(lambda: endpoint_ips(kubectl) == REPLICA_ADDRESSES, timeout=60)
    wait_for(lambda: kubectl("get", "serviceaccount", "default").returncode == 0, timeout=30)
    token = kubectl("create", "token", "default").stdout.strip()
    assert token
    for _ in range(12):  # new connections, spread by the kernel over the three replicas
        out = kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}", token=token)
        assert out.returncode == 0, out.stderr
        assert out.stdout == "system:serviceaccount:default:default"
    os.kill(replica_pids(root)["192.0.2.2"], signal.SIGKILL)
    for _ in range(12):  # the kernel stops handing connections to the dead replica's socket
        out = kubectl("get", "namespaces", "default", "-o", "name")
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "namespace/default"
