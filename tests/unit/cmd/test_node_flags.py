"""The simulated nodes' flags (--simulated-nodes, --simulated-pod-run-duration) and kube-controller-manager's
--node-monitor-grace-period, checked with the other flags."""

from __future__ import annotations

import pytest

from kube_apiserver.cmd.options import ServerRunOptions


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBE_APISERVER_DATA_DIR", str(tmp_path / "data"))


def completed(*argv: str):
    return ServerRunOptions.parse(list(argv)).complete()


def test_defaults_run_no_simulated_node():
    nodes = completed().nodes
    assert (nodes.simulated_nodes, nodes.pod_run_seconds, nodes.node_monitor_grace_period) == (0, 1.0, 50.0)


def test_node_flags_are_parsed():
    opts = completed(
        "--simulated-nodes=3", "--simulated-pod-run-duration=5s", "--node-monitor-grace-period=1m"
    )
    assert (opts.nodes.simulated_nodes, opts.nodes.pod_run_seconds, opts.nodes.node_monitor_grace_period) == (
        3,
        5.0,
        60.0,
    )
    assert opts.validate() == []


def test_out_of_range_values_are_refused():
    problems = completed("--simulated-nodes=-1", "--node-monitor-grace-period=0s").validate()
    assert "--simulated-nodes must be between 0 and 4096" in problems
    assert "--node-monitor-grace-period must be greater than 0" in problems
