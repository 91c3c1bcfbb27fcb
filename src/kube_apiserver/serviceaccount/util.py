"""Service account users (k8s.io/apiserver pkg/authentication/serviceaccount/util.go): the user name,
groups and extra a service account token authenticates as."""

from __future__ import annotations

from dataclasses import dataclass

from ..registry.context import UserInfo

USERNAME_PREFIX = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
GROUP_PREFIX = "system:serviceaccounts:"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"
POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
NODE_UID_KEY = "authentication.kubernetes.io/node-uid"


def make_username(namespace: str, name: str) -> str:
    return f"{USERNAME_PREFIX}{namespace}:{name}"


def make_group_names(namespace: str) -> tuple[str, ...]:
    return ALL_SERVICE_ACCOUNTS_GROUP, f"{GROUP_PREFIX}{namespace}"


def credential_id_for_jti(jti: str) -> str:
    return f"JTI={jti}" if jti else ""


@dataclass(frozen=True)
class ServiceAccountInfo:
    namespace: str
    name: str
    uid: str
    pod_name: str = ""
    pod_uid: str = ""
    node_name: str = ""
    node_uid: str = ""
    credential_id: str = ""

    def user_info(self) -> UserInfo:
        extra: dict[str, list[str]] = {}
        if self.pod_name and self.pod_uid:
            extra[POD_NAME_KEY], extra[POD_UID_KEY] = [self.pod_name], [self.pod_uid]
        if self.credential_id:
            extra[CREDENTIAL_ID_KEY] = [self.credential_id]
        if self.node_name:
            extra[NODE_NAME_KEY] = [self.node_name]
            if self.node_uid:
                extra[NODE_UID_KEY] = [self.node_uid]
        return UserInfo(make_username(self.namespace, self.name), self.uid, make_group_names(self.namespace), extra)
