"""Real etcd members for tests: N members on loopback ephemeral ports, each with a temp data dir.

    with EtcdCluster(tmp_path, members=3) as cluster:
        cluster.client_urls        # ["http://127.0.0.1:port", ...]
        cluster.kill(0)            # SIGKILL one member; cluster.start_member(0) brings it back

Tests that need etcd skip (with the reason) only when the `etcd` binary is not installed."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import pytest

ETCD = shutil.which("etcd") or ""
STARTUP_TIMEOUT = 30.0


def require_etcd() -> None:
    if not ETCD:
        pytest.skip("etcd is not installed (apt-get install etcd-server)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class TLSFiles:
    """Server and client certificates under one CA; etcd then asks clients for a certificate."""

    ca_file: str
    server_cert: str
    server_key: str
    client_cert: str
    client_key: str


@dataclass
class Member:
    name: str
    data_dir: str
    client_port: int
    peer_port: int
    process: subprocess.Popen | None = None
    log_path: str = ""


@dataclass
class EtcdCluster:
    base_dir: str
    members_count: int = 1
    tls: TLSFiles | None = None
    members: list[Member] = field(default_factory=list)

    def __post_init__(self) -> None:
        require_etcd()
        for i in range(self.members_count):
            name = f"m{i}"
            self.members.append(Member(name, os.path.join(self.base_dir, name), free_port(), free_port()))

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    @property
    def client_urls(self) -> list[str]:
        return [self.client_url(i) for i in range(len(self.members))]

    def client_url(self, index: int) -> str:
        return f"{self.scheme}://127.0.0.1:{self.members[index].client_port}"

    @property
    def endpoints(self) -> str:
        """What --etcd-servers takes."""
        return ",".join(self.client_urls)

    def _initial_cluster(self) -> str:
        return ",".join(f"{m.name}=http://127.0.0.1:{m.peer_port}" for m in self.members)

    def _command(self, member: Member) -> list[str]:
        cmd = [
            ETCD,
            "--name",
            member.name,
            "--data-dir",
            member.data_dir,
            "--listen-client-urls",
            f"{self.scheme}://127.0.0.1:{member.client_port}",
            "--advertise-client-urls",
            f"{self.scheme}://127.0.0.1:{member.client_port}",
            "--listen-peer-urls",
            f"http://127.0.0.1:{member.peer_port}",
            "--initial-advertise-peer-urls",
            f"http://127.0.0.1:{member.peer_port}",
            "--initial-cluster",
            self._initial_cluster(),
            "--initial-cluster-state",
            "new",
            "--initial-cluster-token",
            os.path.basename(self.base_dir) or "test",
            "--heartbeat-interval",
            "50",
            "--election-timeout",
            "500",
            "--log-level",
            "warn",
        ]
        if self.tls:
            cmd += [
                "--cert-file",
                self.tls.server_cert,
                "--key-file",
                self.tls.server_key,
                "--trusted-ca-file",
                self.tls.ca_file,
                "--client-cert-auth",
            ]
        return cmd

    def start(self) -> EtcdCluster:
        for i in range(len(self.members)):
            self.start_member(i, wait=False)
        for i in range(len(self.members)):
            self.wait_healthy(i)
        return self

    def start_member(self, index: int, wait: bool = True) -> None:
        member = self.members[index]
        os.makedirs(self.base_dir, exist_ok=True)
        member.log_path = os.path.join(self.base_dir, f"{member.name}.log")
        with open(member.log_path, "ab") as log:
            member.process = subprocess.Popen(
                self._command(member), stdout=log, stderr=log, start_new_session=True
            )
        if wait:
            self.wait_healthy(index)

    def wait_healthy(self, index: int, timeout: float = STARTUP_TIMEOUT) -> None:
        """Until the member answers /health with a leader (its own cluster has quorum)."""
        member = self.members[index]
        deadline = time.monotonic() + timeout
        while not self._healthy(index):
            if member.process is not None and member.process.poll() is not None:
                raise RuntimeError(f"etcd {member.name} exited: {self.log_tail(index)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"etcd {member.name} not healthy: {self.log_tail(index)}")
            time.sleep(0.05)

    def _healthy(self, index: int) -> bool:
        try:
            with self._open(f"{self.client_url(index)}/health") as resp:
                return b'"true"' in resp.read()
        except OSError:
            return False

    def _open(self, url: str):  # noqa: ANN202 - urllib's response
        if not self.tls:
            return urllib.request.urlopen(url, timeout=1)
        import ssl

        ctx = ssl.create_default_context(cafile=self.tls.ca_file)
        ctx.load_cert_chain(self.tls.client_cert, self.tls.client_key)
        return urllib.request.urlopen(url, timeout=1, context=ctx)

    def leader_index(self) -> int:
        """The member that is the raft leader now (from each running member's `etcdctl endpoint status`)."""
        ids: dict[int, int] = {}
        leader = None
        for i in range(len(self.members)):
            if not self.running(i):
                continue
            status = self._status(i)
            if status is not None:
                ids[status["header"]["member_id"]] = i
                leader = status["leader"]
        if leader is None or leader not in ids:
            raise RuntimeError("no leader among the running members")
        return ids[leader]

    def _status(self, index: int) -> dict | None:
        import json

        cmd = [shutil.which("etcdctl") or "etcdctl", "--endpoints", self.client_url(index), "-w", "json"]
        if self.tls:
            cmd += [
                "--cacert",
                self.tls.ca_file,
                "--cert",
                self.tls.client_cert,
                "--key",
                self.tls.client_key,
            ]
        out = subprocess.run(
            [*cmd, "endpoint", "status"],
            capture_output=True,
            text=True,
            timeout=10,
            env={**os.environ, "ETCDCTL_API": "3"},
        )
        return json.loads(out.stdout)[0]["Status"] if out.returncode == 0 else None

    def running(self, index: int) -> bool:
        process = self.members[index].process
        return process is not None and process.poll() is None

    def kill(self, index: int) -> None:
        """SIGKILL: the member dies as on a crash."""
        self._signal(index, signal.SIGKILL)

    def stop_member(self, index: int) -> None:
        self._signal(index, signal.SIGTERM)

    def _signal(self, index: int, sig: int) -> None:
        process = self.members[index].process
        if process is None or process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)

    def stop(self) -> None:
        for i in range(len(self.members)):
            self.stop_member(i)

    def log_tail(self, index: int, size: int = 2000) -> str:
        path = self.members[index].log_path
        if not path or not os.path.exists(path):
            return ""
        with open(path, "rb") as f:
            return f.read()[-size:].decode(errors="replace")

    def __enter__(self) -> EtcdCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def make_tls(directory: str) -> TLSFiles:
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate, as PEM files."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    os.makedirs(directory, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def write(name: str, data: bytes) -> str:
        path = os.path.join(directory, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
        return key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "etcd-test-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )

    def leaf(common_name: str, usage: x509.ObjectIdentifier, server: bool) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
        cert = builder.sign(ca_key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), key_pem(key)

    server_cert, server_key = leaf("etcd-server", ExtendedKeyUsageOID.SERVER_AUTH, True)
    client_cert, client_key = leaf("kube-apiserver-etcd-client", ExtendedKeyUsageOID.CLIENT_AUTH, False)
    return TLSFiles(
        write("ca.crt", ca.public_bytes(serialization.Encoding.PEM)),
        write("server.crt", server_cert),
        write("server.key", server_key),
        write("client.crt", client_cert),
        write("client.key", client_key),
    )


# ---- etcd's v3 JSON gateway: raw keys and values, bytes for bytes ----


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def etcd_call(endpoint: str, method: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(f"{endpoint}/v3/kv/{method}", json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as resp:
        return json.loads(resp.read())


def etcd_get(endpoint: str, key: str) -> tuple[bytes, int]:
    """The value under `key` and its mod revision."""
    kvs = etcd_call(endpoint, "range", {"key": _b64(key.encode())}).get("kvs") or []
    assert kvs, f"nothing stored under {key}"
    return base64.b64decode(kvs[0]["value"]), int(kvs[0]["mod_revision"])


def etcd_put(endpoint: str, key: str, value: bytes) -> None:
    etcd_call(endpoint, "put", {"key": _b64(key.encode()), "value": _b64(value)})
