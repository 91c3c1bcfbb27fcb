"""Protobuf descriptions of the rbac.authorization.k8s.io/v1 kinds (field numbers of k8s.io/api
rbac/v1 generated.proto; notation in apimachinery/protobuf.py)."""

from ...apimachinery import protobuf

GROUP_VERSION = "rbac.authorization.k8s.io/v1"

protobuf.define("""
PolicyRule: verbs=1:string[] apiGroups=2:string[] resources=3:string[] resourceNames=4:string[] nonResourceURLs=5:string[]
AggregationRule: clusterRoleSelectors=1:LabelSelector[]
Role: metadata=1:ObjectMeta rules=2:PolicyRule[]
ClusterRole: metadata=1:ObjectMeta rules=2:PolicyRule[] aggregationRule=3:AggregationRule?
RoleRef: apiGroup=1:string kind=2:string name=3:string
Subject: kind=1:string apiGroup=2:string name=3:string namespace=4:string
RoleBinding: metadata=1:ObjectMeta subjects=2:Subject[] roleRef=3:RoleRef
ClusterRoleBinding: metadata=1:ObjectMeta subjects=2:Subject[] roleRef=3:RoleRef
""")
for _kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"):
    protobuf.register_kind(GROUP_VERSION, _kind)
