"""The real kube-controller-manager (v1.20.2 from ../shared/reference) against this server with the
embedded controllers off (`--controllers=`), as a user running their own control plane does: its
service-account controllers give the namespace its ServiceAccount, its deployment and replicaset
controllers roll a Deployment out (a thread plays the kubelet), and a new image rolls out a new
ReplicaSet.

Skipped when the reference binary is not installed (CI machines may not have it)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Server, playing_kubelet, wait_for

REFERENCE = Path(os.environ.get("KUBE_REF_BIN", os.path.expanduser("~/.cache/kube-reference/bin")))
KUBE_CONTROLLER_MANAGER = REFERENCE / "kube-controller-manager"

pytestmark = pytest.mark.skipif(
    not KUBE_CONTROLLER_MANAGER.exists(),
    reason="the reference kube-controller-manager (../shared/reference/build.sh) is not installed",
)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(str(tmp_path_factory.mktemp("kcm")), ["--controllers="]).start()
    pki = Path(server.data_dir) / "pki"
    log = open(Path(server.data_dir) / "kube-controller-manager.log", "w")  # noqa: SIM115 - closed below
    kcm = subprocess.Popen(
        [
            str(KUBE_CONTROLLER_MANAGER),
            f"--kubeconfig={server.kubeconfig}",
            "--leader-elect=false",
            "--controllers=*",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            "--use-service-account-credentials=true",
            "--bind-address=127.0.0.1",
            "--secure-port=0",
            "--port=0",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield server
    finally:
        kcm.terminate()
        kcm.wait(30)
        log.close()
        server.stop()


def _deployment(srv: Server) -> dict:
    return srv.request("GET", "/apis/apps/v1/namespaces/default/deployments/web").json()


def test_the_reference_controller_manager_rolls_out_a_deployment(srv: Server) -> None:
    wait_for(lambda: srv.request("GET", "/api/v1/namespaces/default/serviceaccounts/default").status == 200, 60)
    srv.kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=3")
    with playing_kubelet(srv):
        srv.kubectl("rollout", "status", "deployment/web", "--timeout=90s", timeout=120)
        assert _deployment(srv)["status"]["availableReplicas"] == 3

        srv.kubectl("set", "image", "deployment/web", "nginx=nginx:2")
        srv.kubectl("rollout", "status", "deployment/web", "--timeout=90s", timeout=120)
    sets = srv.request("GET", "/apis/apps/v1/namespaces/default/replicasets").json()["items"]
    by_image = {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs for rs in sets}
    assert set(by_image) == {"nginx:1", "nginx:2"}
    assert by_image["nginx:2"]["status"]["readyReplicas"] == 3
    assert by_image["nginx:1"]["spec"]["replicas"] == 0
    revision = "deployment.kubernetes.io/revision"
    assert by_image["nginx:2"]["metadata"]["annotations"][revision] == "2"
