"""Operating the command: what the machine refuses (the port taken, the data directory in use, read-only
or its database corrupt or unreadable) ends it with one clear line and a non-zero code, never a
traceback; a default start logs no error-level line."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ERROR_LINE = re.compile(r"^E\d{4} ", re.MULTILINE)
# Root passes permission checks: drop the capabilities that let it, so a read-only file is read-only.
UNPRIVILEGED = [
    "setpriv",
    "--bounding-set=-dac_override,-dac_read_search,-fowner",
    "--inh-caps=-dac_override,-dac_read_search,-fowner",
]


@pytest.fixture(scope="module", params=[("--workers=1",), ()], ids=["one process", "default"])
def way(request: pytest.FixtureRequest) -> tuple[str, ...]:
    """The command's two ways to serve: one process, and its default (a worker per core, where more than one)."""
    return request.param


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(data_dir: Path, port: int, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "kube_apiserver",
        "--data-dir",
        str(data_dir),
        "--secure-port",
        str(port),
        *args,
    ]


def unprivileged(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    return [*UNPRIVILEGED, *cmd]


def fails_with_one_line(cmd: list[str], expected: str) -> None:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    failures = [
        line for line in out.stderr.splitlines() if ERROR_LINE.match(line) or line.startswith("Error:")
    ]
    assert len(failures) == 1, out.stderr
    assert expected in failures[0], failures[0]


def start(data_dir: Path, port: int, log: Path, *args: str) -> subprocess.Popen[bytes]:
    """The command, once it serves (it prints the admin kubeconfig then)."""
    with log.open("wb") as sink:
        proc = subprocess.Popen(command(data_dir, port, *args), stdout=sink, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while b"admin kubeconfig:" not in log.read_bytes():
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory, way: tuple[str, ...]):
    """One server started with defaults; its log is kept until it stops."""
    base = tmp_path_factory.mktemp("running")
    data_dir, log, port = base / "data", base / "log", free_port()
    proc = start(data_dir, port, log, *way)
    yield data_dir, port, log
    stop(proc)


def wait_for_log(log: Path, pattern: str) -> str:
    deadline = time.monotonic() + 60
    while not re.search(pattern, text := log.read_text()):
        assert time.monotonic() < deadline, text
        time.sleep(0.05)
    return text


def test_a_default_start_logs_no_error(running):
    """The advertise address is 127.0.0.1 by default, which Endpoints validation refuses: the first sync
    of the kubernetes service logged an error at every start."""
    _, _, log = running
    # the first sync's outcome: an error before, an info line now
    text = wait_for_log(
        log, r"unable to sync kubernetes service|not publishing endpoints of the kubernetes service"
    )
    assert not ERROR_LINE.findall(text), text
    assert "not publishing endpoints of the kubernetes service: the advertise address 127.0.0.1" in text


def test_the_port_in_use_is_named(tmp_path, way):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        address = f"127.0.0.1:{port}"
        fails_with_one_line(
            command(tmp_path / "data", port, *way),
            f"failed to listen on {address}: listen tcp {address}: bind: address already in use",
        )


def test_a_second_server_on_the_same_data_directory(running, way):
    data_dir, _, _ = running
    fails_with_one_line(
        command(data_dir, free_port(), *way), f"data directory {data_dir} is in use by another kube-apiserver"
    )


def test_a_corrupt_database(tmp_path, way):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "state.db").write_bytes(b"this is not an SQLite database, " * 64)
    fails_with_one_line(
        command(data_dir, free_port(), *way),
        f"unable to open the database {data_dir}/state.db: file is not a database",
    )


def test_an_unreadable_database(tmp_path, way):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "state.db").write_bytes(b"")
    (data_dir / "state.db").chmod(0)
    fails_with_one_line(
        unprivileged(command(data_dir, free_port(), *way)),
        f"unable to open the database {data_dir}/state.db: unable to open database file",
    )


def test_a_read_only_data_directory(tmp_path, way):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    data_dir.chmod(0o555)
    try:
        fails_with_one_line(
            unprivileged(command(data_dir, free_port(), *way)), f"{data_dir}/pki: permission denied"
        )
    finally:
        data_dir.chmod(0o755)


def test_a_read_only_database_in_a_used_data_directory(running, tmp_path, way):
    used, _, _ = running
    data_dir = tmp_path / "data"
    shutil.copytree(used / "pki", data_dir / "pki")
    sqlite3.connect(data_dir / "state.db").close()
    (data_dir / "state.db").chmod(0o444)
    data_dir.chmod(0o555)
    try:
        fails_with_one_line(
            unprivileged(command(data_dir, free_port(), *way)), f"open {data_dir}/lock: permission denied"
        )
    finally:
        data_dir.chmod(0o755)
