"""rbac.authorization.k8s.io/v1: roles, rolebindings, clusterroles, clusterrolebindings: defaults,
validation (exact Status bodies), roleRef immutability, tables, kubectl create (protobuf) and discovery."""

from __future__ import annotations

import pytest

GROUP = "rbac.authorization.k8s.io"
API = f"/apis/{GROUP}/v1"
NS = f"{API}/namespaces/default"
PATHS = {"Role": f"{NS}/roles", "RoleBinding": f"{NS}/rolebindings", "ClusterRole": f"{API}/clusterroles",
         "ClusterRoleBinding": f"{API}/clusterrolebindings"}
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
RULE = {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}
REF = {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def obj(kind: str, name: str, **fields) -> dict:
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": {"name": name}, **fields}


def invalid(kind: str, name: str, causes: list[tuple[str, str, str]]) -> dict:
    """The 422 Status kube-apiserver returns; causes are (reason, field, message)."""
    messages = [f"{f}: {m}" for _, f, m in causes]
    summary = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'{kind}.{GROUP} "{name}" is invalid: {summary}', "reason": "Invalid",
            "details": {"name": name, "group": GROUP, "kind": kind,
                        "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes]},
            "code": 422}


INVALID = [
    ("Role", obj("Role", "no-verbs", rules=[{"apiGroups": [""], "resources": ["pods"]}]),
     [("FieldValueRequired", "rules[0].verbs", "Required value: verbs must contain at least one value")]),
    ("Role", obj("Role", "no-resources", rules=[{"verbs": ["get"]}]),
     [("FieldValueRequired", "rules[0].apiGroups", "Required value: resource rules must supply at least one api group"),
      ("FieldValueRequired", "rules[0].resources", "Required value: resource rules must supply at least one resource")]),
    ("Role", obj("Role", "urls", rules=[RULE, {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]),
     [("FieldValueInvalid", "rules[1].nonResourceURLs",
       'Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs')]),
    ("ClusterRole", obj("ClusterRole", "both", rules=[dict(RULE, nonResourceURLs=["/logs", "/logs/*"])]),
     [("FieldValueInvalid", "rules[0].nonResourceURLs",
       'Invalid value: ["/logs","/logs/*"]: rules cannot apply to both regular resources and non-resource URLs')]),
    ("Role", obj("Role", "a%b"), [("FieldValueInvalid", "metadata.name", "Invalid value: \"a%b\": may not contain '%'")]),
    ("ClusterRole", obj("ClusterRole", ".."), [("FieldValueInvalid", "metadata.name",
                                                "Invalid value: \"..\": may not be '..'")]),
    ("ClusterRole", obj("ClusterRole", "agg-empty", aggregationRule={}),
     [("FieldValueRequired", "aggregationRule.clusterRoleSelectors",
       "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil")]),
    ("ClusterRole", obj("ClusterRole", "agg-bad", aggregationRule={"clusterRoleSelectors": [
        {"matchExpressions": [{"key": "a", "operator": "Near"}]}]}),
     [("FieldValueInvalid", "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator",
       'Invalid value: "Near": not a valid selector operator'),
      ("FieldValueInvalid", "aggregationRule.clusterRoleSelectors[0]", "Invalid value: null: invalid label selector.")]),
    ("RoleBinding", obj("RoleBinding", "ref-group", roleRef=dict(REF, apiGroup="example.com")),
     [("FieldValueNotSupported", "roleRef.apiGroup",
       'Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"')]),
    ("RoleBinding", obj("RoleBinding", "ref-kind", roleRef=dict(REF, kind="Policy")),
     [("FieldValueNotSupported", "roleRef.kind", 'Unsupported value: "Policy": supported values: "Role", "ClusterRole"')]),
    ("ClusterRoleBinding", obj("ClusterRoleBinding", "ref-role", roleRef=dict(REF, kind="Role")),
     [("FieldValueNotSupported", "roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"')]),
    ("RoleBinding", obj("RoleBinding", "ref-name", roleRef={"kind": "Role"}),
     [("FieldValueRequired", "roleRef.name", "Required value")]),
    ("ClusterRoleBinding", obj("ClusterRoleBinding", "ref-path", roleRef=dict(REF, name="a/b")),
     [("FieldValueInvalid", "roleRef.name", "Invalid value: \"a/b\": may not contain '/'")]),
    ("RoleBinding", obj("RoleBinding", "subject-kind", roleRef=REF, subjects=[{"kind": "Robot", "name": "r2"}]),
     [("FieldValueNotSupported", "subjects[0].kind",
       'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"')]),
    ("RoleBinding", obj("RoleBinding", "sa-group", roleRef=REF,
                        subjects=[{"kind": "ServiceAccount", "name": "sa", "apiGroup": GROUP}]),
     [("FieldValueNotSupported", "subjects[0].apiGroup",
       'Unsupported value: "rbac.authorization.k8s.io": supported values: ""')]),
    ("RoleBinding", obj("RoleBinding", "sa-name", roleRef=REF, subjects=[{"kind": "ServiceAccount", "name": "Bad_SA"}]),
     [("FieldValueInvalid", "subjects[0].name", f'Invalid value: "Bad_SA": {SUBDOMAIN}')]),
    ("ClusterRoleBinding", obj("ClusterRoleBinding", "sa-ns", roleRef=REF,
                               subjects=[{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "sa"}]),
     [("FieldValueRequired", "subjects[1].namespace", "Required value")]),
    ("ClusterRoleBinding", obj("ClusterRoleBinding", "user", roleRef=REF,
                               subjects=[{"kind": "User", "apiGroup": "v1"}]),
     [("FieldValueRequired", "subjects[0].name", "Required value"),
      ("FieldValueNotSupported", "subjects[0].apiGroup",
       'Unsupported value: "v1": supported values: "rbac.authorization.k8s.io"')]),
]


@pytest.mark.parametrize(("kind", "body", "causes"), INVALID, ids=[b["metadata"]["name"] for _, b, _ in INVALID])
def test_invalid_objects_are_rejected(server, kind, body, causes):
    r = server.request("POST", PATHS[kind], body)
    assert r.status == 422
    assert r.json() == invalid(kind, body["metadata"]["name"], causes)


def test_valid_objects_and_defaults(server):
    role = server.request("POST", PATHS["Role"], obj("Role", "system:Reader", rules=[RULE]))
    assert role.status == 201 and role.json()["rules"] == [RULE]
    subjects = [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "builder"}]
    created = server.request("POST", PATHS["RoleBinding"],
                             obj("RoleBinding", "readers", roleRef={"kind": "Role", "name": "system:Reader"},
                                 subjects=subjects))
    assert created.status == 201
    body = created.json()
    assert body["roleRef"] == {"apiGroup": GROUP, "kind": "Role", "name": "system:Reader"}
    assert body["subjects"] == [{"kind": "User", "name": "alice", "apiGroup": GROUP},
                                {"kind": "Group", "name": "devs", "apiGroup": GROUP},
                                {"kind": "ServiceAccount", "name": "builder"}]
    urls = obj("ClusterRole", "logs", rules=[{"verbs": ["get"], "nonResourceURLs": ["/logs/*"]}])
    assert server.request("POST", PATHS["ClusterRole"], urls).status == 201


def test_put_creates(server):
    r = server.request("PUT", f"{PATHS['ClusterRole']}/put-created", obj("ClusterRole", "put-created", rules=[RULE]))
    assert r.status == 201


def test_role_ref_is_immutable(server):
    created = server.request("POST", PATHS["ClusterRoleBinding"], obj("ClusterRoleBinding", "immutable",
                                                                      roleRef=REF)).json()
    changed = dict(created, roleRef=dict(REF, name="edit"))
    r = server.request("PUT", f"{PATHS['ClusterRoleBinding']}/immutable", changed)
    assert r.status == 422
    assert r.json() == invalid("ClusterRoleBinding", "immutable", [(
        "FieldValueInvalid", "roleRef",
        'Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: '
        "cannot change roleRef")])
    subjects = dict(created, subjects=[{"kind": "Group", "name": "ops"}])
    updated = server.request("PUT", f"{PATHS['ClusterRoleBinding']}/immutable", subjects)
    assert updated.status == 200 and updated.json()["subjects"][0]["apiGroup"] == GROUP


def test_invalid_update_reports_causes_twice(server):
    """ValidateRoleUpdate calls ValidateRole again: kube-apiserver lists each cause twice, the message once."""
    created = server.request("POST", PATHS["Role"], obj("Role", "twice", rules=[RULE])).json()
    r = server.request("PUT", f"{PATHS['Role']}/twice", dict(created, rules=[{"apiGroups": [""], "resources": ["x"]}]))
    assert r.status == 422
    body = r.json()
    assert body["message"] == (f'Role.{GROUP} "twice" is invalid: rules[0].verbs: Required value: verbs must contain '
                               "at least one value")
    assert [c["field"] for c in body["details"]["causes"]] == ["rules[0].verbs", "rules[0].verbs"]


def test_tables(server):
    server.request("POST", PATHS["RoleBinding"], obj("RoleBinding", "table-rb", roleRef=REF, subjects=[
        {"kind": "User", "name": "u1"}, {"kind": "User", "name": "u2"},
        {"kind": "ServiceAccount", "name": "sa", "namespace": "kube-system"}]))
    table = server.request("GET", f"{PATHS['RoleBinding']}/table-rb", headers={"Accept": TABLE}).json()
    columns = [(c["name"], c["type"], c["format"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [("Name", "string", "name", 0), ("Role", "string", "", 0), ("Age", "string", "", 0),
                       ("Users", "string", "", 1), ("Groups", "string", "", 1), ("ServiceAccounts", "string", "", 1)]
    assert table["columnDefinitions"][3]["description"] == "Users in the roleBinding"
    cells = table["rows"][0]["cells"]
    assert cells[:2] == ["table-rb", "ClusterRole/view"] and cells[3:] == ["u1, u2", "", "kube-system/sa"]
    roles = server.request("GET", PATHS["ClusterRole"], headers={"Accept": TABLE}).json()
    assert [(c["name"], c["type"]) for c in roles["columnDefinitions"]] == [("Name", "string"), ("Created At", "date")]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_create_and_get(server):
    steps = [
        (("create", "role", "kc-role", "--verb=get,list", "--resource=configmaps,secrets"), "role"),
        (("create", "clusterrole", "kc-logs", "--verb=get", "--non-resource-url=/logs/*"), "clusterrole"),
        (("create", "clusterrole", "kc-agg", "--aggregation-rule=rbac.example.com/aggregate=true"), "clusterrole"),
        (("create", "rolebinding", "kc-rb", "--role=kc-role", "--user=ann", "--group=ops",
          "--serviceaccount=default:robot"), "rolebinding"),
        (("create", "clusterrolebinding", "kc-crb", "--clusterrole=kc-logs", "--serviceaccount=kube-system:ci"),
         "clusterrolebinding"),
    ]
    for args, resource in steps:
        assert f"{resource}.{GROUP}/{args[2]} created" in server.kubectl(*args).stdout
    role = server.request("GET", f"{PATHS['Role']}/kc-role").json()
    assert role["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps", "secrets"]}]
    agg = server.request("GET", f"{PATHS['ClusterRole']}/kc-agg").json()
    assert agg["aggregationRule"] == {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate": "true"}}]}
    crb = server.request("GET", f"{PATHS['ClusterRoleBinding']}/kc-crb").json()
    assert crb["roleRef"] == {"apiGroup": GROUP, "kind": "ClusterRole", "name": "kc-logs"}
    assert crb["subjects"] == [{"kind": "ServiceAccount", "name": "ci", "namespace": "kube-system"}]
    assert server.kubectl("get", "roles").stdout.splitlines()[0].split() == ["NAME", "CREATED", "AT"]
    assert server.kubectl("get", "rolebindings").stdout.splitlines()[0].split() == ["NAME", "ROLE", "AGE"]
    wide = server.kubectl("get", "rolebinding", "kc-rb", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    row = wide[1].split()
    assert row[:2] == ["kc-rb", "Role/kc-role"] and row[3:] == ["ann", "ops", "default/robot"]
    crbs = server.kubectl("get", "clusterrolebindings", "-o", "wide").stdout.splitlines()
    assert crbs[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_api_resources(server):
    lines = server.kubectl("api-resources", f"--api-group={GROUP}").stdout.splitlines()
    assert lines[0].split() == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    assert [line.split() for line in lines[1:]] == [
        ["clusterrolebindings", f"{GROUP}/v1", "false", "ClusterRoleBinding"],
        ["clusterroles", f"{GROUP}/v1", "false", "ClusterRole"],
        ["rolebindings", f"{GROUP}/v1", "true", "RoleBinding"],
        ["roles", f"{GROUP}/v1", "true", "Role"],
    ]


@pytest.mark.usefixtures("kubectl_available")
def test_kubectl_apply_server_side_binding(server, tmp_path):
    manifest = tmp_path / "rb.yaml"
    manifest.write_text(f"""apiVersion: {GROUP}/v1
kind: RoleBinding
metadata: {{name: ssa-rb, namespace: default}}
roleRef: {{kind: ClusterRole, name: view}}
subjects: [{{kind: User, name: zoe}}]
""")
    for _ in range(2):
        server.kubectl("apply", "--server-side", "-f", str(manifest))
    changed = manifest.read_text().replace("name: view", "name: edit")
    manifest.write_text(changed)
    out = server.kubectl("apply", "--server-side", "-f", str(manifest), check=False)
    assert out.returncode != 0 and "cannot change roleRef" in out.stderr
