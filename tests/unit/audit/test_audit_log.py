"""The log backend: the JSON and legacy lines, the modes, rotation; the event's pieces; the flags."""

from __future__ import annotations

import asyncio
import gzip
import io
import os
import time
from types import SimpleNamespace

import orjson
import pytest

from kube_apiserver.audit.event import AuditContext, micro_time, source_ips, without_managed_fields
from kube_apiserver.audit.log import Buffered, LogBackend, StreamWriter, legacy_line, new_log_backend
from kube_apiserver.audit.policy import RequestAuditConfig
from kube_apiserver.audit.rotate import MEGABYTE, RotatingFile
from kube_apiserver.cmd.options import ServerRunOptions

EVENT = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "auditID": "id-1",
         "stage": "ResponseComplete", "requestURI": "/api/v1/pods?watch=1", "verb": "watch",
         "user": {"username": "alice", "groups": ["a", "b"]}, "sourceIPs": ["10.0.0.1", "127.0.0.1"],
         "userAgent": 'kubectl "x"', "objectRef": {"resource": "pods", "namespace": "ns"},
         "responseStatus": {"metadata": {}, "code": 200},
         "requestReceivedTimestamp": "2024-05-01T10:00:00.120000Z", "stageTimestamp": "2024-05-01T10:00:01.000000Z"}


class Collect:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def process_event(self, ev: dict) -> bool:
        self.events.append(ev)
        return True


def test_legacy_line_is_event_string():
    assert legacy_line(EVENT).decode() == (
        '2024-05-01T10:00:00.12Z AUDIT: id="id-1" stage="ResponseComplete" ip="10.0.0.1" method="watch" '
        'user="alice" groups="\\"a\\",\\"b\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl \\"x\\"" '
        'namespace="ns" uri="/api/v1/pods?watch=1" response="200"\n')
    anonymous = {**EVENT, "user": {}, "objectRef": None, "responseStatus": None, "sourceIPs": [],
                 "impersonatedUser": {"username": "bob"}}
    line = legacy_line(anonymous).decode()
    assert 'user="<none>" groups="<none>" as="bob" asgroups="<lookup>"' in line
    assert 'ip="<unknown>"' in line and 'namespace="<none>"' in line and line.endswith('response="<deferred>"\n')


def test_json_lines_and_modes(tmp_path):
    out = io.BytesIO()
    assert LogBackend(StreamWriter(out)).process_event(EVENT)
    assert out.getvalue() == orjson.dumps(EVENT) + b"\n"
    strict = new_log_backend(str(tmp_path / "a.log"), "json", "blocking-strict")
    strict.out.close()
    assert strict.process_event(EVENT) is False  # a failed write fails the request in blocking-strict
    blocking = new_log_backend(str(tmp_path / "b.log"), "json", "blocking")
    blocking.delegate.out.close()
    assert blocking.process_event(EVENT) is True


def test_batch_mode_writes_once_the_loop_is_free(tmp_path):
    async def run() -> tuple[bytes, bytes]:
        backend = new_log_backend(str(tmp_path / "c.log"), "json", "batch", buffer_size=2)
        assert isinstance(backend, Buffered)
        assert backend.process_event(EVENT) and backend.process_event(EVENT)
        assert not backend.process_event(EVENT)  # the buffer is full: dropped
        before = (tmp_path / "c.log").read_bytes()
        await asyncio.sleep(0)
        after = (tmp_path / "c.log").read_bytes()
        await backend.shutdown()
        return before, after

    before, after = asyncio.run(run())
    assert before == b"" and after.count(b"\n") == 2


def test_rotation_keeps_max_backups_and_compresses(tmp_path):
    path = str(tmp_path / "logs" / "audit.log")
    log = RotatingFile(path, max_size_mb=1, max_backups=2, compress=True)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    log.max_size = 100  # bytes, to rotate quickly
    line = b"x" * 60 + b"\n"
    for i in range(5):
        time.sleep(0.002)  # backups are named to the millisecond
        log.write(line)
        if i < 4:
            (tmp_path / "logs" / f"audit-2024-01-0{i + 1}T00-00-00.000.log").write_bytes(b"old\n")
    log.close()
    names = sorted(os.listdir(tmp_path / "logs"))
    assert names[-1] == "audit.log" and len(names) == 3 and all(n.endswith(".log.gz") for n in names[:2])
    with gzip.open(tmp_path / "logs" / names[0]) as f:
        assert f.read() in (line, b"old\n")
    assert (tmp_path / "logs" / "audit.log").read_bytes() == line
    assert MEGABYTE == 1 << 20


def test_event_pieces():
    assert source_ips({"x-forwarded-for": "1.2.3.4, bad, 5.6.7.8", "x-real-ip": "1.2.3.4"}, "5.6.7.8") == \
        ["1.2.3.4", "5.6.7.8"]
    assert source_ips({"x-real-ip": "9.9.9.9"}, "127.0.0.1") == ["9.9.9.9", "127.0.0.1"]
    assert micro_time(0.5) == "1970-01-01T00:00:00.500000Z"
    table = {"kind": "Table", "rows": [{"object": {"metadata": {"name": "a", "managedFields": []}}}]}
    assert without_managed_fields(table)["rows"][0]["object"]["metadata"] == {"name": "a"}
    items = {"items": [{"metadata": {"managedFields": [], "name": "b"}}], "metadata": {"managedFields": []}}
    assert without_managed_fields(items) == {"items": [{"metadata": {"name": "b"}}], "metadata": {}}


def test_stages_annotations_and_request_object():
    sink = Collect()
    ac = AuditContext(RequestAuditConfig("Request", frozenset({"RequestReceived"})), sink, "id", 10.0)
    ac.verb, ac.object_ref = "update", {"resource": "pods", "namespace": "", "name": "", "uid": "",
                                        "apiGroup": "", "apiVersion": "v1", "resourceVersion": "",
                                        "subresource": ""}
    ac.add_annotation("k", "first")
    ac.add_annotation("k", "second")  # the first value stays
    ac.log_request_object(b'{"metadata":{"name":"p","namespace":"ns","resourceVersion":"7"}}', "application/json")
    assert ac.process("RequestReceived", 11.0)
    ac.set_code(200)
    ac.process("ResponseComplete", 12.0)
    (ev,) = sink.events
    assert ev["objectRef"] == {"resource": "pods", "namespace": "ns", "name": "p", "apiVersion": "v1",
                               "resourceVersion": "7"}
    assert ev["requestObject"]["metadata"]["name"] == "p" and ev["annotations"] == {"k": "first"}
    assert ev["stageTimestamp"] == "1970-01-01T00:00:12.000000Z"


def _validate(*flags: str) -> list[str]:
    return ServerRunOptions.parse(list(flags)).audit.validate()


def test_flags_and_their_validation():
    assert _validate("--audit-log-mode=nope", "--audit-log-format=xml") == []  # no log path: not checked
    assert _validate("--audit-log-path=-", "--audit-log-mode=nope", "--audit-log-format=xml",
                     "--audit-log-maxage=-1", "--audit-log-version=audit.k8s.io/v1beta1") == [
        'invalid audit log mode nope, allowed modes are "batch,blocking,blocking-strict"',
        'invalid group version, allowed versions are ["audit.k8s.io/v1"]',
        'invalid audit log format xml, allowed formats are "legacy,json"',
        "--audit-log-maxage -1 can't be a negative number"]
    assert _validate("--audit-log-path=-", "--audit-log-mode=batch", "--audit-log-batch-buffer-size=0") == [
        "invalid audit batch log buffer size 0, must be a positive number"]
    opts = ServerRunOptions.parse(["--audit-policy-file=/p.yaml", "--audit-log-maxsize=5"]).audit
    assert (opts.policy_file, opts.log_max_size, opts.log_max_backups, opts.log_max_age) == ("/p.yaml", 5, 100, 366)


def test_apply_to_needs_a_policy_and_a_path(tmp_path):
    (tmp_path / "p.yaml").write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]\n")
    config = SimpleNamespace(audit_policy=None, audit_backend=None, destroy_functions=[])
    ServerRunOptions.parse(["--audit-log-path=-"]).audit.apply_to(config)
    assert config.audit_policy is None and config.audit_backend is None
    ServerRunOptions.parse([f"--audit-policy-file={tmp_path / 'p.yaml'}",
                            f"--audit-log-path={tmp_path / 'a.log'}"]).audit.apply_to(config)
    assert config.audit_policy is not None and str(config.audit_backend) == "ignoreErrors<log>"
    assert config.destroy_functions == [config.audit_backend.shutdown]


def test_a_bad_policy_file_stops_the_server(tmp_path):
    (tmp_path / "p.yaml").write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n")
    config = SimpleNamespace(audit_policy=None, audit_backend=None, destroy_functions=[])
    opts = ServerRunOptions.parse([f"--audit-policy-file={tmp_path / 'p.yaml'}"]).audit
    with pytest.raises(ValueError, match=r"^loading audit policy file: loaded illegal policy with 0 rules: from"):
        opts.apply_to(config)
