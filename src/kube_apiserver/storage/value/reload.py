"""--encryption-provider-config-automatic-reload: the configuration file is loaded again when its content
changes, and the new transformers replace the old ones whole (DynamicEncryptionConfigContent).

kube-apiserver compares the file's hash every minute; here the file's stat is looked at every second and the
hash compared when it changed (and every minute regardless), so an edit takes effect within a second or two.
A file that does not load keeps the configuration in force, and says so in the log."""

from __future__ import annotations

import asyncio
import logging

from ...apimachinery.filewatch import stamp
from .config import EncryptionConfigError, load, read_with_hash
from .keys import KeyTransformers
from .metrics import ConfigMetrics, TransformationMetrics

log = logging.getLogger("kube_apiserver")

CONTROLLER_NAME = "encryption-provider-config-automatic-reload-controller"
STAT_INTERVAL = 1.0  # how often the file's stat is looked at
HASH_INTERVAL = 60.0  # EncryptionConfigFileChangePollDuration: the content is hashed at least this often


class ConfigReloader:
    """Polled every STAT_INTERVAL by a Periodic; `check` loads the file again when it changed."""

    def __init__(
        self,
        path: str,
        targets: list[KeyTransformers],
        content_hash: str,
        metrics: TransformationMetrics | None = None,
        config_metrics: ConfigMetrics | None = None,
    ):
        self.path = path
        self.targets = targets
        self.content_hash = content_hash  # of the configuration in force
        self.metrics = metrics
        self.config_metrics = config_metrics
        self.failed_hash = ""  # a content that did not load: logged once, not at every poll
        self._stat = stamp(path)
        self._since_hash = 0.0
        self.reloads = 0

    async def poll(self) -> None:
        stat = stamp(self.path)
        self._since_hash += STAT_INTERVAL
        if stat == self._stat and self._since_hash < HASH_INTERVAL:
            return
        self._stat, self._since_hash = stat, 0.0
        await asyncio.to_thread(self.check)  # a new KMS provider is probed first: it may wait for its plugin

    def check(self) -> bool:
        """Loads the file if its content differs from the configuration in force; True when it was replaced."""
        try:
            _, content_hash = read_with_hash(self.path)
            if content_hash in (self.content_hash, self.failed_hash):
                return False
            config = load(self.path, reload=True, metrics=self.metrics, require_healthy=True)
        except EncryptionConfigError as err:
            self._failed(err)
            return False
        for target in self.targets:
            target.set(config)
        self.content_hash, self.failed_hash = config.content_hash, ""
        self.reloads += 1
        if self.config_metrics is not None:
            self.config_metrics.reloaded(True, config.content_hash)
        log.info("Loaded new kms encryption config content name=%s", CONTROLLER_NAME)
        return True

    def _failed(self, err: EncryptionConfigError) -> None:
        if self.config_metrics is not None:
            self.config_metrics.reloaded(False)
        try:
            failed = read_with_hash(self.path)[1]
        except EncryptionConfigError:
            failed = "unreadable"
        if failed != self.failed_hash:
            log.error(
                "error processing encryption config file %s: %s; the previous configuration stays in force",
                self.path,
                err,
            )
        self.failed_hash = failed

