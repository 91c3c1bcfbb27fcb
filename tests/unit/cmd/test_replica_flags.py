"""The flags of a replica among several: kube-controller-manager's --leader-elect* for the embedded
controllers (checked as NewLeaderElector does) and kube-apiserver's --endpoint-reconciler-type and
--apiserver-count."""

from __future__ import annotations

import pytest

from kube_apiserver.cmd.options import ServerRunOptions


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBE_APISERVER_DATA_DIR", str(tmp_path / "data"))


def completed(*argv: str):
    return ServerRunOptions.parse(list(argv)).complete()


def test_defaults_are_kube_controller_managers_and_the_lease_reconciler():
    opts = completed()
    le = opts.leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (True, 15.0, 10.0, 2.0)
    assert (le.resource_name, le.resource_namespace) == ("kube-controller-manager", "kube-system")
    assert (opts.endpoint_reconciler_type, opts.apiserver_count) == ("lease", 1)
    assert opts.validate() == []


def test_leader_election_flags_are_parsed():
    le = completed(
        "--leader-elect=false",
        "--leader-elect-lease-duration=30s",
        "--leader-elect-renew-deadline=20s",
        "--leader-elect-retry-period=5s",
        "--leader-elect-resource-name=embedded",
        "--leader-elect-resource-namespace=ops",
    ).leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (
        False,
        30.0,
        20.0,
        5.0,
    )
    assert (le.resource_name, le.resource_namespace) == ("embedded", "ops")


def test_leader_election_durations_are_checked_when_it_is_on():
    assert completed("--leader-elect-renew-deadline=15s").validate() == [
        "leaseDuration must be greater than renewDeadline"
    ]
    assert completed("--leader-elect-retry-period=9s").validate() == [
        "renewDeadline must be greater than retryPeriod*JitterFactor"
    ]
    assert completed("--leader-elect=false", "--leader-elect-renew-deadline=15s").validate() == []


def test_endpoint_reconciler_flags_are_checked():
    assert completed("--endpoint-reconciler-type=none").validate() == []
    assert completed("--endpoint-reconciler-type=master-count", "--apiserver-count=3").validate() == []
    assert completed("--endpoint-reconciler-type=master-count", "--apiserver-count=0").validate() == [
        "--apiserver-count should be a positive number, but value '0' provided"
    ]
    assert completed("--endpoint-reconciler-type=static").validate() == ["Reconciler not implemented: static"]


def test_workers_are_checked():
    assert completed("--workers=2").validate() == []
    assert completed("--workers=-1").validate() == ["--workers must not be negative, got -1"]
    assert completed("--workers=2", "--enable-testing-endpoints", "--deterministic").validate() == [
        "--workers=2 and --deterministic cannot be used together",
        "--workers=2 and --enable-testing-endpoints cannot be used together",
    ]
    assert completed("--enable-testing-endpoints").validate() == []


def test_workers_by_default_are_one_per_core_up_to_four(monkeypatch):
    from kube_apiserver.cmd import completion

    for cores, workers in ((1, 1), (2, 2), (3, 3), (4, 4), (16, 4)):
        monkeypatch.setattr(completion, "usable_cores", lambda cores=cores: cores)
        assert completed().workers == workers
        assert completed("--workers=0").workers == workers
    assert completed("--workers=7").workers == 7
    assert completed("--workers=1").workers == 1


def test_a_test_drives_one_process_by_default(monkeypatch):
    """The testing endpoints and --deterministic act on one process's clock, faults and history."""
    from kube_apiserver.cmd import completion

    monkeypatch.setattr(completion, "usable_cores", lambda: 8)
    assert completed("--enable-testing-endpoints").workers == 1
    assert completed("--deterministic").workers == 1
    assert completed("--deterministic", "--enable-testing-endpoints").validate() == []


def test_on_etcd_replicas_are_laid_out_by_hand(monkeypatch):
    """Each worker on etcd is a replica with etcd watches of its own: one per replica unless asked."""
    from kube_apiserver.cmd import completion

    monkeypatch.setattr(completion, "usable_cores", lambda: 8)
    etcd = ("--storage-backend=etcd3", "--etcd-servers=http://127.0.0.1:2379")
    assert completed(*etcd).workers == 1
    assert completed(*etcd, "--workers=3").workers == 3
    assert completed("--storage-backend=memory").workers == 4


def test_a_worker_runs_with_the_same_flags_on_the_shared_port():
    from kube_apiserver.cmd.workers import worker_argv

    assert worker_argv(["--workers", "3", "--data-dir=/d", "--workers=2", "--controllers="], 6443, "10.0.0.0/24") == [
        "--data-dir=/d", "--controllers=", "--service-cluster-ip-range=10.0.0.0/24", "--workers=1",
        "--secure-port=6443"]
    assert worker_argv(["--service-cluster-ip-range", "10.96.0.0/12"], 6443, "10.96.0.0/12") == [
        "--service-cluster-ip-range", "10.96.0.0/12", "--workers=1", "--secure-port=6443"]
