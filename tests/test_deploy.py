"""deploy/: the HAProxy config and the compose file agree with each other, with the
Dockerfile and with what the replicas test (tests/e2e/test_replicas.py) runs; the config's
routes and dynamic cookies behave as its comments say, in front of stub replicas."""

from __future__ import annotations

import difflib
import http.server
import os
import re
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from hall import (  # noqa: E402
    COOKIE,
    HAPROXY_CFG,
    REPLICAS,
    SECRET_ENV,
    HAProxy,
    dynamic_cookie,
    haproxy_exe,
    loopback_config,
    sections,
    servers,
    sticky_backend,
    templates,
)

COMPOSE = ROOT / "deploy" / "compose.yaml"
CFG = HAPROXY_CFG.read_text()
SECTIONS = sections(CFG)


def _lines(pattern: str, text: str = CFG) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if re.match(pattern, ln.strip())]


def _haproxy() -> str:
    exe = haproxy_exe()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("haproxy is not installed (apt-get install haproxy)", False)
        pytest.skip("haproxy is not installed")
    return exe


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_streamlits_paths_are_sticky_by_a_dynamic_cookie_and_join_is_not():
    assert sticky_backend() == "backend attnviz"
    assert [h for h in SECTIONS if h.startswith("backend ")] == ["backend attnviz"]
    assert _lines(r"default_backend attnviz$", SECTIONS["frontend hall"])
    body = SECTIONS["backend attnviz"]
    (cookie,) = _lines(r"cookie ", body)
    assert cookie.startswith(f"cookie {COOKIE} insert indirect nocache") and "dynamic" in cookie
    assert _lines(r"dynamic-cookie-key \S+$", body)
    # /join and everything under /join/ (not /joinery) ignore the cookie
    assert _lines(r"ignore-persist if \{ path /join \} \|\| \{ path_beg /join/ \}$", body)


def test_the_replicas_come_from_dockers_dns_and_are_health_checked():
    ((header, prefix, names, address),) = templates()
    assert header == "backend attnviz" and prefix == "attnviz" and len(names) >= REPLICAS
    assert address == "attnviz:8501"
    assert _lines(r"nameserver \S+ 127\.0\.0\.11:53$", SECTIONS["resolvers docker"])
    body = SECTIONS["backend attnviz"]
    (default,) = _lines(r"default-server ", body)
    assert " check" in default and "resolvers docker" in default
    # `none`: a replica not (yet) in DNS leaves its slot empty, haproxy still starts
    assert re.search(r"init-addr \S*\bnone\b", default)
    assert _lines(r"option httpchk$", body)
    assert _lines(r"http-check send meth GET uri /_stcore/health$", body)
    assert _lines(r"http-check expect string ok$", body)


def test_haproxy_redispatches_keeps_websockets_and_compresses():
    assert "mode http" in CFG
    assert "option redispatch" in CFG
    assert _lines(r"retries [1-9]")
    assert _lines(r"timeout tunnel \d+[hm]$")
    frontend = SECTIONS["frontend hall"]
    (types,) = _lines(r"compression type ", frontend)
    assert {"text/html", "text/css", "text/javascript", "application/json"} <= set(types.split())
    assert _lines(r'http-response set-header Cache-Control "public, max-age=31536000', frontend)
    readme = (ROOT / "README.md").read_text()
    assert "ip_hash;" not in readme and "```nginx" not in readme  # replaced by deploy/


def test_compose_runs_one_scalable_service_that_the_templates_resolve(compose):
    services = compose["services"]
    assert sorted(services) == ["attnviz", "haproxy", "postgres"]
    svc = services["attnviz"]
    (_, prefix, _, address) = templates()[0]
    host, port = address.split(":")
    assert host == "attnviz" and port == "8501" and svc["expose"] == ["8501"]
    assert "EXPOSE 8501" in (ROOT / "Dockerfile").read_text()
    assert svc["deploy"]["replicas"] == REPLICAS  # the hall the tests run (bench/hall.py)
    assert "container_name" not in svc and "ports" not in svc  # both would stop --scale
    assert svc["build"] == ".."  # the project's Dockerfile
    assert svc["environment"][SECRET_ENV].startswith("${" + SECRET_ENV + ":?")
    assert services["haproxy"]["depends_on"] == ["attnviz"]


def test_compose_haproxy_uses_this_config_and_publishes_its_bind_port(compose):
    proxy = compose["services"]["haproxy"]
    assert proxy["image"].startswith("haproxy:")
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in proxy["volumes"]
    (bind,) = _lines(r"bind ")
    port = bind.split()[1].rsplit(":", 1)[1]
    assert any(p.endswith(f":{port}") for p in proxy["ports"]), proxy["ports"]


def test_loopback_config_changes_only_the_addresses():
    ports = [5001, 5002, 5003]
    out = loopback_config(CFG, 4000, ports)
    diff = list(difflib.ndiff(CFG.splitlines(), out.splitlines()))
    removed = [ln[2:].strip() for ln in diff if ln.startswith("- ")]
    added = [ln[2:].strip() for ln in diff if ln.startswith("+ ")]
    assert removed == ["bind :8080", *_lines(r"server-template ")]
    assert added == [
        "bind 127.0.0.1:4000",
        *(f"server attnviz{i} 127.0.0.1:{p}" for i, p in enumerate(ports, 1)),
    ]
    # the dynamic cookies stay: each replica's value is derived from its loopback port
    assert servers(out) == [
        (f"attnviz{i}", dynamic_cookie("attnviz-lecture-hall", "127.0.0.1", p))
        for i, p in enumerate(ports, 1)
    ]
    assert "dynamic-cookie-key attnviz-lecture-hall" in CFG
    assert servers() == []  # the shipped file: addresses only DNS knows
    with pytest.raises(ValueError, match="slots"):
        loopback_config(CFG, 4000, list(range(5001, 5001 + len(templates()[0][2]) + 1)))
    with pytest.raises(ValueError, match="server-template"):
        loopback_config(out, 4000, ports)


def test_haproxy_accepts_the_shipped_config_and_the_loopback_one(tmp_path):
    exe = _haproxy()
    shipped = subprocess.run([exe, "-c", "-f", str(HAPROXY_CFG)], capture_output=True, text=True)
    out = shipped.stdout + shipped.stderr
    assert shipped.returncode == 0 and "Configuration file is valid" in out, out
    # offline, the only warnings are the slots that DNS has not filled (init-addr none)
    warnings = [ln for ln in out.splitlines() if "[WARNING]" in ln]
    assert warnings and all("could not resolve address 'attnviz'" in w for w in warnings), out
    path = tmp_path / "haproxy.cfg"
    path.write_text(loopback_config(CFG, 4000, [5001, 5002, 5003]))
    result = subprocess.run([exe, "-c", "-f", str(path)], capture_output=True, text=True)
    out = result.stdout + result.stderr
    assert result.returncode == 0 and "Configuration file is valid" in out, out
    assert "[WARNING]" not in out, out


class _Stub(http.server.BaseHTTPRequestHandler):
    """A replica stand-in: answers every GET with "ok <its port>"."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        body = f"ok {self.server.server_address[1]}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def stub_hall():
    _haproxy()
    stubs = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stub) for _ in range(REPLICAS)]
    for s in stubs:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    proxy = None
    try:
        proxy = HAProxy([s.server_address[1] for s in stubs]).start()
        yield proxy, [s.server_address[1] for s in stubs]
    finally:
        if proxy:
            proxy.stop()
        for s in stubs:
            s.shutdown()
            s.server_close()


def _get(url: str, cookie: str | None = None) -> tuple[int, str | None]:
    """(the port of the stub that answered, the SERVERID it was given or None)."""
    req = urllib.request.Request(url, headers={"Cookie": f"{COOKIE}={cookie}"} if cookie else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        port = int(r.read().decode().split()[1])
        given = [c for c in r.headers.get_all("Set-Cookie") or [] if c.startswith(f"{COOKIE}=")]
    return port, given[0].split(";")[0].split("=", 1)[1] if given else None


def test_haproxy_derives_the_cookies_servers_computes_and_routes_join_without_one(stub_hall):
    proxy, ports = stub_hall
    by_port = dict(zip(ports, proxy.cookies(), strict=True))
    assert len(set(by_port.values())) == REPLICAS
    # Streamlit's paths: a browser without a cookie gets its replica's derived value ...
    seen = set()
    for _ in range(2 * REPLICAS):
        port, given = _get(proxy.url + "/_stcore/health")
        assert given == by_port[port]
        seen.add(port)
    assert seen == set(ports)  # leastconn over idle replicas: each one in turn
    # ... and is held there by it (no new cookie), on any of Streamlit's paths
    for port, cookie in by_port.items():
        for path in ("/", "/exercises?class=AB12CD", "/_stcore/host-config", "/joinery"):
            assert _get(proxy.url + path, cookie) == (port, None)
    # /join, its files and its API: any replica, the cookie neither read nor set, even for a
    # browser without one
    first = ports[0]
    for path in ("/join?class=AB12CD", "/join/", "/join/page.js", "/join/api/state"):
        answered = {_get(proxy.url + path, by_port[first]) for _ in range(2 * REPLICAS)}
        assert {given for _, given in answered} == {None}
        assert len({port for port, _ in answered}) > 1, (path, answered)
        assert _get(proxy.url + path)[1] is None
