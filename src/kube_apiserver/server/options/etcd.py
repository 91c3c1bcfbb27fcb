"""Storage flags (k8s.io/apiserver/pkg/server/options/etcd.go) plus this server's SQLite backend.

Differences from kube-apiserver: --storage-backend accepts `sqlite` (the default: a database under
--data-dir, no etcd needed) besides `etcd3`; --etcd-servers is only required for etcd3; --data-dir is new
(with etcd3 it holds only the generated certificates and credentials). The etcd connection flags are
refused with SQLite, where they would do nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kube_apiserver.apimachinery.gostrconv import quote
from kube_apiserver.cli.flagset import FlagSet

STORAGE_TYPE_SQLITE = "sqlite"
STORAGE_TYPE_ETCD3 = "etcd3"
STORAGE_TYPE_MEMORY = "memory"
STORAGE_TYPES = (STORAGE_TYPE_ETCD3, STORAGE_TYPE_SQLITE, STORAGE_TYPE_MEMORY)
DEFAULT_STORAGE_TYPE = STORAGE_TYPE_SQLITE
DATA_DIR_ENV = "KUBE_APISERVER_DATA_DIR"
DEFAULT_ETCD_PREFIX = "/registry"  # SQLite's keys are always under it
# storage.codec's MEDIA_TYPES and DEFAULT_MEDIA_TYPE (not imported: it loads the protobuf message table,
# which parsing flags does not need; tests/unit/cmd/test_etcd_flags.py keeps them equal)
STORAGE_MEDIA_TYPES = ("application/json", "application/vnd.kubernetes.protobuf", "application/yaml")
DEFAULT_STORAGE_MEDIA_TYPE = "application/json"
OVERRIDES_INVALID = (
    "--etcd-servers-overrides invalid, must be of format: group/resource#servers, "
    "where servers are URLs, semicolon separated"
)


@dataclass(frozen=True)
class EtcdServerOverride:
    """Another etcd for one resource (--etcd-servers-overrides): `group/resource#url;url`."""

    group: str
    resource: str
    servers: tuple[str, ...]


def parse_etcd_servers_overrides(overrides: list[str]) -> list[EtcdServerOverride]:
    """ParseEtcdServersOverrides; a malformed entry raises ValueError with kube-apiserver's message."""
    parsed: list[EtcdServerOverride] = []
    for override in overrides:
        tokens = override.split("#")
        if len(tokens) != 2:
            raise ValueError(OVERRIDES_INVALID)
        group_resource = tokens[0].split("/")
        if len(group_resource) != 2:
            raise ValueError(OVERRIDES_INVALID)
        servers = tokens[1].split(";")
        if any(not server for server in servers):
            raise ValueError(OVERRIDES_INVALID)
        parsed.append(EtcdServerOverride(group_resource[0], group_resource[1], tuple(servers)))
    return parsed


def default_data_dir() -> str:
    """$KUBE_APISERVER_DATA_DIR, else ~/.local/share/kube-apiserver."""
    configured = os.environ.get(DATA_DIR_ENV)
    return configured or os.path.join(os.path.expanduser("~"), ".local", "share", "kube-apiserver")


@dataclass
class EtcdOptions:
    storage_backend: str = DEFAULT_STORAGE_TYPE
    etcd_servers: list[str] = field(default_factory=list)
    etcd_prefix: str = DEFAULT_ETCD_PREFIX
    etcd_keyfile: str = ""
    etcd_certfile: str = ""
    etcd_cafile: str = ""
    compaction_interval: float = 300.0
    count_metric_poll_period: float = 60.0
    etcd_servers_overrides: list[str] = field(default_factory=list)
    storage_media_type: str = DEFAULT_STORAGE_MEDIA_TYPE
    enable_watch_cache: bool = True
    data_dir: str = ""
    encryption_provider_config: str = ""
    encryption_provider_config_automatic_reload: bool = False

    def add_flags(self, fs: FlagSet) -> None:
        fs.string_var(self, "storage_backend", "storage-backend", _STORAGE_BACKEND_HELP)
        fs.string_slice_var(
            self,
            "etcd_servers",
            "etcd-servers",
            "List of etcd servers to connect with (scheme://ip:port), comma separated. "
            "Required with --storage-backend=etcd3.",
        )
        fs.string_var(
            self, "etcd_prefix", "etcd-prefix", "The prefix to prepend to all resource paths in etcd."
        )
        fs.string_var(self, "etcd_keyfile", "etcd-keyfile", "SSL key file used to secure etcd communication.")
        fs.string_var(
            self,
            "etcd_certfile",
            "etcd-certfile",
            "SSL certification file used to secure etcd communication.",
        )
        fs.string_var(
            self,
            "etcd_cafile",
            "etcd-cafile",
            "SSL Certificate Authority file used to secure etcd communication.",
        )
        fs.duration_var(
            self,
            "compaction_interval",
            "etcd-compaction-interval",
            "The interval of compaction requests. If 0, the compaction request from apiserver is disabled.",
        )
        fs.duration_var(
            self,
            "count_metric_poll_period",
            "etcd-count-metric-poll-period",
            "Frequency of polling etcd for number of resources per type. 0 disables the metric collection.",
        )
        fs.string_slice_var(self, "etcd_servers_overrides", "etcd-servers-overrides", _OVERRIDES_HELP)
        fs.string_var(self, "storage_media_type", "storage-media-type", _STORAGE_MEDIA_TYPE_HELP)
        fs.bool_var(self, "enable_watch_cache", "watch-cache", "Enable watch caching in the apiserver")
        fs.string_var(self, "data_dir", "data-dir", _DATA_DIR_HELP)
        fs.string_var(
            self,
            "encryption_provider_config",
            "encryption-provider-config",
            "The file containing configuration for encryption providers to be used for storing secrets in etcd",
        )
        fs.bool_var(
            self,
            "encryption_provider_config_automatic_reload",
            "encryption-provider-config-automatic-reload",
            _ENCRYPTION_RELOAD_HELP,
        )

    def complete(self) -> None:
        self.data_dir = os.path.abspath(os.path.expanduser(self.data_dir or default_data_dir()))

    def validate(self) -> list[str]:
        errors: list[str] = []
        if self.storage_backend == STORAGE_TYPE_ETCD3 and not self.etcd_servers:
            errors.append("--etcd-servers must be specified")
        if self.storage_backend not in STORAGE_TYPES:
            errors.append(
                f"--storage-backend invalid, allowed values: {', '.join(STORAGE_TYPES)}. "
                f"If not specified, it will default to '{DEFAULT_STORAGE_TYPE}'"
            )
        try:
            parse_etcd_servers_overrides(self.etcd_servers_overrides)
        except ValueError as err:
            errors.append(str(err))
        if self.storage_media_type and self.storage_media_type not in STORAGE_MEDIA_TYPES:
            errors.append(
                f"--storage-media-type {quote(self.storage_media_type)} invalid, "
                f"allowed values: {', '.join(STORAGE_MEDIA_TYPES)}"
            )
        if self.encryption_provider_config_automatic_reload and not self.encryption_provider_config:
            errors.append("--encryption-provider-config-automatic-reload must be set with --encryption-provider-config")
        if self.compaction_interval < 0:
            errors.append("--etcd-compaction-interval can not be negative value")
        if self.data_dir and os.path.exists(self.data_dir) and not os.path.isdir(self.data_dir):
            errors.append(f"--data-dir {quote(self.data_dir)} is not a directory")
        if self.storage_backend in (STORAGE_TYPE_SQLITE, STORAGE_TYPE_MEMORY):
            errors.extend(
                f"--{flag} is only used with --storage-backend=etcd3" for flag in self._etcd_flags_set()
            )
        return errors

    def _etcd_flags_set(self) -> list[str]:
        """The etcd connection flags given: with SQLite they would do nothing, so they are refused."""
        given = {
            "etcd-servers": bool(self.etcd_servers),
            "etcd-prefix": self.etcd_prefix != DEFAULT_ETCD_PREFIX,
            "etcd-keyfile": bool(self.etcd_keyfile),
            "etcd-certfile": bool(self.etcd_certfile),
            "etcd-cafile": bool(self.etcd_cafile),
            "etcd-servers-overrides": bool(self.etcd_servers_overrides),
        }
        return [flag for flag, is_set in given.items() if is_set]


_STORAGE_BACKEND_HELP = (
    "The storage backend for persistence. Options: 'sqlite' (default: a database in --data-dir), 'etcd3', "
    "'memory' (this process's memory: lost when the server stops; for tests)."
)
_OVERRIDES_HELP = (
    "Per-resource etcd servers overrides, comma separated. The individual override format: "
    "group/resource#servers, where servers are URLs, semicolon separated. Note that this applies only to "
    'resources compiled into this server binary. e.g. "/pods#http://etcd4:2379;http://etcd5:2379,'
    '/events#http://etcd6:2379"'
)
_STORAGE_MEDIA_TYPE_HELP = (
    "The media type to use to store objects in storage. Some resources or storage backends may only support "
    "a specific media type and will ignore this setting. Supported media types: "
    "[application/json, application/yaml, application/vnd.kubernetes.protobuf]"
)
_ENCRYPTION_RELOAD_HELP = (
    "Determines if the file set by --encryption-provider-config should be automatically reloaded if the disk "
    "contents change. Setting this to true disables the ability to uniquely identify distinct KMS plugins via "
    "the API server healthz endpoints."
)
_DATA_DIR_HELP = (
    "Directory holding the SQLite database and generated files (self-signed certificates, admin token and "
    "kubeconfig). Defaults to $KUBE_APISERVER_DATA_DIR, or ~/.local/share/kube-apiserver. "
    "(Not a kube-apiserver flag.)"
)
