"""The etcd3 backend's flags: kube-apiserver's names, defaults and validation messages."""

from __future__ import annotations

import pytest

from kube_apiserver.cmd.options import ServerRunOptions
from kube_apiserver.cmd.storage_backend import override_key_prefixes
from kube_apiserver.server.options.etcd import OVERRIDES_INVALID, parse_etcd_servers_overrides

ETCD3 = ("--storage-backend=etcd3", "--etcd-servers=https://10.0.0.1:2379,https://10.0.0.2:2379")


def errors_for(*argv: str) -> list[str]:
    return ServerRunOptions.parse(list(argv)).complete().validate()


def test_every_etcd_flag_is_taken_with_etcd3():
    opts = ServerRunOptions.parse(
        [
            *ETCD3,
            "--etcd-prefix=/other",
            "--etcd-cafile=ca.crt",
            "--etcd-certfile=c.crt",
            "--etcd-keyfile=c.key",
            "--etcd-compaction-interval=10m",
            "--etcd-count-metric-poll-period=30s",
            "--etcd-servers-overrides=/events#http://10.0.0.3:2379;http://10.0.0.4:2379",
            "--storage-media-type=application/vnd.kubernetes.protobuf",
        ]
    ).complete()
    assert opts.validate() == []
    etcd = opts.etcd
    assert etcd.etcd_servers == ["https://10.0.0.1:2379", "https://10.0.0.2:2379"]
    assert (etcd.etcd_prefix, etcd.etcd_cafile, etcd.etcd_certfile, etcd.etcd_keyfile) == (
        "/other",
        "ca.crt",
        "c.crt",
        "c.key",
    )
    assert (etcd.compaction_interval, etcd.count_metric_poll_period) == (600.0, 30.0)
    assert etcd.storage_media_type == "application/vnd.kubernetes.protobuf"
    [override] = parse_etcd_servers_overrides(etcd.etcd_servers_overrides)
    assert (override.group, override.resource, override.servers) == (
        "",
        "events",
        ("http://10.0.0.3:2379", "http://10.0.0.4:2379"),
    )


def test_defaults():
    etcd = ServerRunOptions.parse([]).complete().etcd
    assert (etcd.storage_backend, etcd.etcd_prefix, etcd.count_metric_poll_period) == (
        "sqlite",
        "/registry",
        60.0,
    )
    assert etcd.etcd_servers_overrides == [] and etcd.storage_media_type == "application/json"


@pytest.mark.parametrize("override", ["events", "/events", "a/b/c#http://x", "/events#", "/events#http://x;"])
def test_a_malformed_override_is_kube_apiservers_error(override):
    assert errors_for(*ETCD3, f"--etcd-servers-overrides={override}") == [OVERRIDES_INVALID]
    assert OVERRIDES_INVALID == (
        "--etcd-servers-overrides invalid, must be of format: group/resource#servers, "
        "where servers are URLs, semicolon separated"
    )


def test_an_unknown_storage_media_type_is_refused():
    assert errors_for("--storage-media-type=text/plain") == [
        '--storage-media-type "text/plain" invalid, allowed values: '
        "application/json, application/vnd.kubernetes.protobuf, application/yaml"
    ]
    assert errors_for("--storage-media-type=application/yaml") == []


def test_overrides_are_refused_with_sqlite():
    assert errors_for("--etcd-servers-overrides=/events#http://10.0.0.3:2379") == [
        "--etcd-servers-overrides is only used with --storage-backend=etcd3"
    ]


def test_the_memory_backend_is_taken_and_refuses_etcd_flags_as_sqlite_does():
    assert errors_for("--storage-backend=memory") == []
    assert errors_for("--storage-backend=memory", "--etcd-servers=http://10.0.0.3:2379") == [
        "--etcd-servers is only used with --storage-backend=etcd3"
    ]
    assert errors_for("--storage-backend=disk") == [
        "--storage-backend invalid, allowed values: etcd3, sqlite, memory. If not specified, it will default to "
        "'sqlite'"
    ]


def test_an_override_covers_the_resource_and_its_group_qualified_keys():
    assert override_key_prefixes("", "events") == ["/registry/events"]
    assert override_key_prefixes("apps", "deployments") == [
        "/registry/deployments",
        "/registry/apps/deployments",
    ]


def test_the_media_types_are_the_storage_codecs():
    from kube_apiserver.server.options import etcd
    from kube_apiserver.storage import codec

    assert etcd.STORAGE_MEDIA_TYPES == tuple(sorted(codec.MEDIA_TYPES))
    assert etcd.DEFAULT_STORAGE_MEDIA_TYPE == codec.DEFAULT_MEDIA_TYPE
