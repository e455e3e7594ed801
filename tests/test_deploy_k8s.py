"""deploy/k8s/: every manifest valid for a named Kubernetes version (kubernetes-validate's
bundled schemas, offline) and clean under yamllint; the kustomization lists every manifest;
the manifests agree with each other and with the Dockerfile (probe, ports, user, Secret),
and only Streamlit's pages are sticky."""

from __future__ import annotations

import re
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from yamllint import linter
from yamllint.config import YamlLintConfig

from attnviz import classroom

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
DOCKERFILE = (ROOT / "Dockerfile").read_text()
# The Kubernetes version the manifests are checked against (kubernetes-validate ships its
# schemas; `validate` answers the version whose schema it used).
K8S_VERSION = "1.33"
YAMLLINT = YamlLintConfig(
    "{extends: default, rules: {line-length: {max: 100}, document-start: disable}}"
)
FILES = sorted(p.name for p in K8S.iterdir())
MANIFESTS = [f for f in FILES if f != "kustomization.yaml"]


def _docs(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]


def _one(kind: str, name: str) -> dict:
    docs = [d for f in MANIFESTS for d in _docs(f)]
    found = [d for d in docs if (d["kind"], d["metadata"]["name"]) == (kind, name)]
    assert len(found) == 1, (kind, name, found)
    return found[0]


DEPLOYMENT = _one("Deployment", "attnviz")
POD = DEPLOYMENT["spec"]["template"]["spec"]
(CONTAINER,) = POD["containers"]


def test_the_kustomization_lists_every_manifest_of_the_folder():
    assert all(f.endswith(".yaml") for f in FILES), FILES  # nothing else lies here
    kustomization = _docs("kustomization.yaml")[0]
    assert kustomization["kind"] == "Kustomization"
    resources = kustomization["resources"]
    assert sorted(resources) == MANIFESTS and len(set(resources)) == len(resources)


@pytest.mark.parametrize("name", MANIFESTS)
def test_every_manifest_is_valid_for_the_named_kubernetes_version(name):
    for doc in _docs(name):
        # strict: a field the schema does not know (a typo) is an error too
        assert kubernetes_validate.validate(doc, K8S_VERSION, strict=True) == K8S_VERSION


def test_the_validator_refuses_what_kubernetes_would():
    typo = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replica": 3}}
    with pytest.raises(kubernetes_validate.ValidationError, match="'replica' was unexpected"):
        kubernetes_validate.validate(typo, K8S_VERSION, strict=True)
    port = {**CONTAINER, "ports": [{"containerPort": "8501"}]}
    spec = {**POD, "containers": [port]}
    bad = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "template": {"spec": spec}}}
    with pytest.raises(kubernetes_validate.ValidationError, match="'8501' is not of type"):
        kubernetes_validate.validate(bad, K8S_VERSION, strict=True)


@pytest.mark.parametrize("name", FILES)
def test_yamllint_finds_nothing(name):
    path = K8S / name
    problems = list(linter.run(path.read_text(), YAMLLINT, str(path)))
    assert not problems, [f"{name}:{p.line}: {p.message} ({p.rule})" for p in problems]


def _port(ports: list[dict], ref: str | int) -> int:
    """A port reference (a number, or a name in ports) as a number."""
    if isinstance(ref, int):
        return ref
    (found,) = [p for p in ports if p.get("name") == ref]
    return found.get("containerPort", found.get("port"))


def test_the_probes_check_the_dockerfiles_health_url_on_its_exposed_port():
    (exposed,) = re.findall(r"^EXPOSE (\d+)$", DOCKERFILE, re.M)
    assert "/_stcore/health" in DOCKERFILE  # the Dockerfile's HEALTHCHECK
    ports = CONTAINER["ports"]
    assert [p["containerPort"] for p in ports] == [int(exposed)]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = CONTAINER[probe]["httpGet"]
        assert get["path"] == "/_stcore/health" and _port(ports, get["port"]) == int(exposed)
    labels = DEPLOYMENT["spec"]["template"]["metadata"]["labels"]
    assert DEPLOYMENT["spec"]["selector"]["matchLabels"].items() <= labels.items()
    for name in ("attnviz", "attnviz-join"):
        service = _one("Service", name)["spec"]
        assert service["selector"].items() <= labels.items()  # the same pods
        (sp,) = service["ports"]
        assert _port(ports, sp["targetPort"]) == int(exposed) == sp["port"]
    pdb = _one("PodDisruptionBudget", "attnviz")["spec"]
    assert pdb["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["maxUnavailable"] < DEPLOYMENT["spec"]["replicas"]


def _backends(ingress: dict) -> list[tuple[str, str, str, str]]:
    """(path, pathType, service, port name) of every path of the Ingress."""
    return [
        (
            p["path"],
            p["pathType"],
            p["backend"]["service"]["name"],
            p["backend"]["service"]["port"]["name"],
        )  # fmt: skip
        for rule in ingress["spec"]["rules"]
        for p in rule["http"]["paths"]
    ]


def test_streamlits_pages_are_sticky_and_join_is_not():
    sticky, join = _one("Ingress", "attnviz"), _one("Ingress", "attnviz-join")
    assert _backends(sticky) == [("/", "Prefix", "attnviz", "http")]
    assert _backends(join) == [("/join", "Prefix", "attnviz-join", "http")]
    for _, _, service, port in _backends(sticky) + _backends(join):
        assert port in [p["name"] for p in _one("Service", service)["spec"]["ports"]]
    notes = sticky["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert notes["nginx.ingress.kubernetes.io/affinity-mode"] == "persistent"
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):  # websockets, a lesson long
        assert int(notes[f"nginx.ingress.kubernetes.io/{timeout}"]) >= 3600
    # /join: no affinity on its Ingress nor on its Service (ingress-nginx keeps affinity per
    # Service, Traefik reads it from the Service's annotations)
    keys = join["metadata"].get("annotations", {})
    assert not any("affinity" in k or "session-cookie" in k for k in keys), keys
    assert not _one("Service", "attnviz-join")["metadata"].get("annotations")
    traefik = _one("Service", "attnviz")["metadata"]["annotations"]
    assert traefik["traefik.ingress.kubernetes.io/service.sticky.cookie"] == "true"
    assert sticky["spec"]["ingressClassName"] == join["spec"]["ingressClassName"]


def test_the_secrets_the_pods_read_exist_with_placeholder_values():
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in CONTAINER["env"] if "valueFrom" in e}
    assert set(env) == {"STREAMLIT_SERVER_COOKIE_SECRET", classroom.DATABASE_URL_ENV}
    for ref in env.values():
        secret = _one("Secret", ref["name"])
        assert ref["key"] in secret["stringData"] and not ref.get("optional")
    values = _one("Secret", "attnviz")["stringData"].values()
    assert all("REPLACE-ME" in v for v in values)  # never a real secret in the repository
    assert env[classroom.DATABASE_URL_ENV]["key"] == "database-url"


def test_the_pods_run_as_the_dockerfiles_user_on_a_read_only_root():
    (user,) = re.findall(r"^USER (\d+):(\d+)$", DOCKERFILE, re.M)
    security = POD["securityContext"]
    assert security["runAsNonRoot"] is True
    assert (str(security["runAsUser"]), str(security["runAsGroup"])) == user
    assert CONTAINER["image"] == "attnviz:latest"
    own = CONTAINER["securityContext"]
    assert own["readOnlyRootFilesystem"] and not own["allowPrivilegeEscalation"]
    assert own["capabilities"]["drop"] == ["ALL"]
    # what the app may write: /tmp and the image's data directory (ATTNVIZ_DATA_DIR)
    (data_dir,) = re.findall(rf"{classroom.DATA_DIR_ENV}=(\S+)", DOCKERFILE)
    mounts = {m["mountPath"] for m in CONTAINER["volumeMounts"]}
    assert mounts == {"/tmp", data_dir}
    # numba's cache (attnviz/engine/fast_exp.py) is written under /tmp, not the image's directory
    env = {e["name"]: e.get("value") for e in CONTAINER["env"]}
    assert env["NUMBA_CACHE_DIR"].startswith("/tmp/")
