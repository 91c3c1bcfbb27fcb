"""Replicas sharing one data directory (on etcd it holds only credentials): started at the same moment,
they all end up with the same CA, service account signing key and admin token, the ones on disk."""

from __future__ import annotations

import hashlib
import multiprocessing
import os

from kube_apiserver.cmd import admin
from kube_apiserver.cmd.options import ServerRunOptions

REPLICAS = 6


def _digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _start_credentials(data_dir: str, index: int, start, out) -> None:  # noqa: ANN001 - multiprocessing objects
    start.wait()
    opts = ServerRunOptions.parse(
        ["--data-dir", data_dir, f"--advertise-address=192.0.2.{index + 1}", "--storage-backend=etcd3"]
    ).complete()
    token = admin.ensure_admin_credential(opts.data_dir)
    out.put((_digest(opts.ca_file), _digest(opts.authentication.service_accounts.signing_key_file), token))


def test_replicas_started_together_share_one_set_of_credentials(tmp_path):
    data_dir = str(tmp_path / "shared")
    context = multiprocessing.get_context("fork")
    start, out = context.Event(), context.Queue()
    workers = [
        context.Process(target=_start_credentials, args=(data_dir, i, start, out)) for i in range(REPLICAS)
    ]
    for worker in workers:
        worker.start()
    start.set()
    results = [out.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(30)
    assert all(worker.exitcode == 0 for worker in workers)
    on_disk = (
        _digest(os.path.join(data_dir, "pki", "ca.crt")),
        _digest(os.path.join(data_dir, "pki", "sa.key")),
        admin.ensure_admin_credential(data_dir),
    )
    assert set(results) == {on_disk}
