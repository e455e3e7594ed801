"""deploy/: the HAProxy config and the compose file agree with each other, with the
Dockerfile and with what the replicas test (tests/e2e/test_replicas.py) runs."""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from hall import HAPROXY_CFG, SECRET_ENV, haproxy_exe, loopback_config, servers  # noqa: E402

COMPOSE = ROOT / "deploy" / "compose.yaml"
CFG = HAPROXY_CFG.read_text()


def _lines(pattern: str) -> list[str]:
    return [ln.strip() for ln in CFG.splitlines() if re.match(pattern, ln.strip())]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_haproxy_is_sticky_by_cookie_with_one_value_per_server():
    assert "cookie SERVERID insert indirect nocache" in CFG
    names = servers()
    assert len(names) >= 2
    assert all(cookie for _, cookie in names), names
    assert len({c for _, c in names}) == len(names), "two servers share a cookie value"
    assert len({n for n, _ in names}) == len(names)


def test_haproxy_checks_health_redispatches_and_keeps_websockets():
    assert "mode http" in CFG
    assert _lines(r"http-check send meth GET uri /_stcore/health$")
    assert _lines(r"http-check expect string ok$")
    assert "option redispatch" in CFG
    assert _lines(r"retries [1-9]")
    assert _lines(r"timeout tunnel \d+[hm]$")
    # every server is health-checked (default-server ... check)
    assert any(" check" in ln for ln in _lines(r"default-server "))
    readme = (ROOT / "README.md").read_text()
    assert "ip_hash;" not in readme and "```nginx" not in readme  # replaced by deploy/


def test_compose_runs_one_replica_per_haproxy_server(compose):
    services = compose["services"]
    replicas = {n: s for n, s in services.items() if n not in ("haproxy", "postgres")}
    assert sorted(replicas) == sorted(n for n, _ in servers())
    for line in _lines(r"server "):
        host, port = line.split()[2].split(":")
        assert host in replicas
        assert port == "8501"
    assert "EXPOSE 8501" in (ROOT / "Dockerfile").read_text()
    for name, svc in replicas.items():
        assert svc["build"] == "..", name  # the project's Dockerfile
        assert SECRET_ENV in svc["environment"], f"{name} lacks the shared cookie secret"
    secrets = {svc["environment"][SECRET_ENV] for svc in replicas.values()}
    assert len(secrets) == 1 and "${" + SECRET_ENV in secrets.pop()


def test_compose_haproxy_uses_this_config_and_publishes_its_bind_port(compose):
    proxy = compose["services"]["haproxy"]
    assert proxy["image"].startswith("haproxy:")
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in proxy["volumes"]
    (bind,) = _lines(r"bind ")
    port = bind.split()[1].rsplit(":", 1)[1]
    assert any(p.endswith(f":{port}") for p in proxy["ports"]), proxy["ports"]


def test_loopback_config_changes_only_the_addresses():
    n = len(servers())
    out = loopback_config(CFG, 4000, list(range(5001, 5001 + n)))
    changed = [
        ln
        for ln in difflib.ndiff(CFG.splitlines(), out.splitlines())
        if ln.startswith(("- ", "+ "))
    ]
    assert len(changed) == 2 * (n + 1)
    added = [ln[2:].strip() for ln in changed if ln.startswith("+ ")]
    assert added[0] == "bind 127.0.0.1:4000"
    for i, line in enumerate(added[1:]):
        assert line.split()[2] == f"127.0.0.1:{5001 + i}"
    with pytest.raises(ValueError, match="server lines"):
        loopback_config(CFG, 4000, [5001])


def test_haproxy_accepts_the_config():
    exe = haproxy_exe()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("haproxy is not installed (apt-get install haproxy)", False)
        pytest.skip("haproxy is not installed")
    ports = list(range(5001, 5001 + len(servers())))
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"attnviz-haproxy-check-{os.getpid()}.cfg"
    path.write_text(loopback_config(CFG, 4000, ports))
    try:
        result = subprocess.run([exe, "-c", "-f", str(path)], capture_output=True, text=True)
    finally:
        path.unlink()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Configuration file is valid" in result.stdout + result.stderr
