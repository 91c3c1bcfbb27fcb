"""Pod Security admission (k8s.io/pod-security-admission and the PodSecurity plugin): the baseline and
restricted Pod Security Standards, selected per namespace by pod-security.kubernetes.io/* labels."""

from .admission import PodSecurity
from .config import ConfigError, PodSecurityConfiguration, load_from_admission_config

__all__ = ["ConfigError", "PodSecurity", "PodSecurityConfiguration", "load_from_admission_config"]
