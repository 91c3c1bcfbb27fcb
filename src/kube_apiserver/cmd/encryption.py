"""Encryption at rest for the server being built (EtcdOptions.maybeApplyResourceTransformers):
--encryption-provider-config puts the configured transformers between the codec and the KV of every store
(the main one and --etcd-servers-overrides'), their metrics into /metrics, and with
--encryption-provider-config-automatic-reload a poll that loads the file again when it changes."""

from __future__ import annotations

from dataclasses import dataclass

from ..apimachinery.wait import Periodic
from ..server.config import Config
from ..server.options.etcd import EtcdOptions
from ..storage.factory import StorageFactory
from ..storage.objectstore import ObjectStore
from ..storage.value import config as encryption_config
from ..storage.value.keys import KEY_ROOT, KeyTransformers
from ..storage.value.metrics import TransformationMetrics
from ..storage.value.reload import STAT_INTERVAL, ConfigReloader


@dataclass
class Encryption:
    config: encryption_config.EncryptionConfiguration
    metrics: TransformationMetrics


def load_encryption(opts: EtcdOptions) -> Encryption | None:
    """The configuration of --encryption-provider-config, read before any storage opens: a file that does not
    load stops the start with kube-apiserver's one line (`Error: error while parsing file: ...`)."""
    if not opts.encryption_provider_config:
        return None
    metrics = TransformationMetrics()
    reload = opts.encryption_provider_config_automatic_reload
    try:
        config = encryption_config.load(opts.encryption_provider_config, reload, metrics)
    except encryption_config.EncryptionConfigError as err:
        raise SystemExit(f"Error: {err}") from None
    return Encryption(config, metrics)


def apply_encryption(
    encryption: Encryption | None, opts: EtcdOptions, generic: Config, factory: StorageFactory
) -> ConfigReloader | None:
    """Puts the transformers on every store of the factory; returns the reloader, if the file is reloaded."""
    if encryption is None:
        return None
    stores = [factory.store, *factory.overrides.values()]
    targets = [_attach(store, encryption.config, factory) for store in dict.fromkeys(stores)]
    generic.metrics.collectors.append(encryption.metrics.exposition)
    if not opts.encryption_provider_config_automatic_reload:
        return None
    path, content_hash = opts.encryption_provider_config, encryption.config.content_hash
    reloader = ConfigReloader(path, targets, content_hash, encryption.metrics)
    task = Periodic("encryption config reload", STAT_INTERVAL, reloader.poll)
    task.start()
    generic.destroy_functions.append(task.stop)
    return reloader


def _attach(
    store: ObjectStore, config: encryption_config.EncryptionConfiguration, factory: StorageFactory
) -> KeyTransformers:
    # the root the KV stores /registry under (--etcd-prefix): the authenticated data is the etcd key
    root = getattr(store.kv, "prefix", KEY_ROOT)
    store.transformers = KeyTransformers(
        config, factory.resources, root if isinstance(root, str) else KEY_ROOT
    )
    return store.transformers
