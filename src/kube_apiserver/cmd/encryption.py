"""Encryption at rest for the server being built (EtcdOptions.maybeApplyResourceTransformers):
--encryption-provider-config puts the configured transformers between the codec and the KV of every store
(the main one and --etcd-servers-overrides'), their metrics into /metrics, a status probe of its KMS v2
providers, and with --encryption-provider-config-automatic-reload a poll that loads the file again when it
changes. The storage/value modules are loaded only when the flag is given (ciphers, PyNaCl, gRPC)."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..apimachinery.wait import Periodic
from ..controlplane.identitylease import identity_lease_name
from ..server.config import Config
from ..server.healthz import HealthChecker, HealthCheckError
from ..server.options.etcd import EtcdOptions
from ..storage.factory import StorageFactory
from ..storage.objectstore import ObjectStore

if TYPE_CHECKING:
    from ..storage.value.config import EncryptionConfiguration
    from ..storage.value.keys import KeyTransformers
    from ..storage.value.metrics import TransformationMetrics

PROBE_TICK = 0.5
KMS_HEALTH_CHECK = "kms-providers"  # one check for every KMS v2 provider (and always with automatic reload)  # how often the KMS providers' probe times are looked at


@dataclass
class Encryption:
    config: EncryptionConfiguration
    metrics: TransformationMetrics


def load_encryption(opts: EtcdOptions) -> Encryption | None:
    """The configuration of --encryption-provider-config, read before any storage opens: a file that does not
    load stops the start with kube-apiserver's one line (`Error: error while parsing file: ...`)."""
    if not opts.encryption_provider_config:
        return None
    from ..storage.value import config as encryption_config
    from ..storage.value.metrics import TransformationMetrics

    metrics = TransformationMetrics()
    reload = opts.encryption_provider_config_automatic_reload
    try:
        config = encryption_config.load(opts.encryption_provider_config, reload, metrics)
    except encryption_config.EncryptionConfigError as err:
        raise SystemExit(f"Error: {err}") from None
    return Encryption(config, metrics)


def apply_encryption(
    encryption: Encryption | None, opts: EtcdOptions, generic: Config, factory: StorageFactory
) -> list[KeyTransformers]:
    """Puts the transformers on every store of the factory and starts what keeps them current."""
    if encryption is None:
        return []
    from ..storage.value.kmsv2 import Prober
    from ..storage.value.metrics import ConfigMetrics
    from ..storage.value.reload import STAT_INTERVAL, ConfigReloader

    stores = [factory.store, *factory.overrides.values()]
    targets = [_attach(store, encryption.config, factory) for store in dict.fromkeys(stores)]
    config_metrics = ConfigMetrics(identity_lease_name(socket.gethostname()))  # the APIServerID's hash labels
    config_metrics.config_loaded(encryption.config.content_hash)
    generic.metrics.collectors += [encryption.metrics.exposition, config_metrics.exposition]
    prober = Prober(lambda: targets[0].config.kms)
    tasks = [Periodic("kms provider probe", PROBE_TICK, prober.tick)]
    if opts.encryption_provider_config_automatic_reload:
        path, content_hash = opts.encryption_provider_config, encryption.config.content_hash
        reloader = ConfigReloader(path, targets, content_hash, encryption.metrics, config_metrics)
        tasks.append(Periodic("encryption config reload", STAT_INTERVAL, reloader.poll))
    for task in tasks:
        task.start()
        generic.destroy_functions.append(task.stop)
    generic.destroy_functions.append(prober.close)
    if encryption.config.kms or opts.encryption_provider_config_automatic_reload:
        generic.health_checks.append(HealthChecker(KMS_HEALTH_CHECK, lambda: _kms_healthy(targets[0])))
    return targets


async def _kms_healthy(target: KeyTransformers) -> None:
    """kmsHealthChecker: every KMS provider of the configuration in force, each probe's answer cached."""
    from ..storage.value.transformer import TransformError

    problems = []
    for index, provider in enumerate(target.config.kms):
        try:
            await asyncio.to_thread(provider.healthz)
        except TransformError as err:
            problems.append(f"kms-provider-{index}: {err}")
    if problems:
        raise HealthCheckError(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")


def _attach(store: ObjectStore, config: EncryptionConfiguration, factory: StorageFactory) -> KeyTransformers:
    from ..storage.value.keys import KEY_ROOT, KeyTransformers

    # the root the KV stores /registry under (--etcd-prefix): the authenticated data is the etcd key
    root = getattr(store.kv, "prefix", KEY_ROOT)
    store.transformers = KeyTransformers(
        config, factory.resources, root if isinstance(root, str) else KEY_ROOT
    )
    return store.transformers
