"""A lecture hall on this machine: Debian's haproxy with deploy/haproxy.cfg in front of
attnviz replicas (``streamlit run serve.py``), all on loopback and free ports.

The project's own ``deploy/haproxy.cfg`` is used, with exactly two substitutions
(:func:`loopback_config`): the ``bind`` address becomes ``127.0.0.1:<port>`` and the
address of the i-th ``server`` line becomes ``127.0.0.1:<port of replica i>``. Used by
``bench/replicas.py`` and ``tests/e2e/test_replicas.py``.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HAPROXY_CFG = REPO / "deploy" / "haproxy.cfg"
COOKIE = "SERVERID"
SECRET_ENV = "STREAMLIT_SERVER_COOKIE_SECRET"

_BIND = re.compile(r"^(\s*bind\s+)(\S+)(.*)$", re.M)
_SERVER = re.compile(r"^(\s*server\s+(\S+)\s+)(\S+)(.*)$", re.M)


def haproxy_exe() -> str | None:
    """Debian's haproxy: on PATH, or in /usr/sbin (not on a normal user's PATH); None if
    it is not installed."""
    exe = shutil.which("haproxy")
    if exe is None and Path("/usr/sbin/haproxy").exists():
        exe = "/usr/sbin/haproxy"
    return exe


def servers(text: str | None = None) -> list[tuple[str, str]]:
    """(name, cookie value) of every ``server`` line of the config."""
    text = HAPROXY_CFG.read_text() if text is None else text
    out = []
    for m in _SERVER.finditer(text):
        cookie = re.search(r"\bcookie\s+(\S+)", m.group(4))
        out.append((m.group(2), cookie.group(1) if cookie else ""))
    return out


def loopback_config(text: str, bind_port: int, server_ports: list[int]) -> str:
    """deploy/haproxy.cfg with its one ``bind`` on 127.0.0.1:bind_port and the i-th
    ``server`` at 127.0.0.1:server_ports[i]; nothing else changes."""
    binds = _BIND.findall(text)
    if len(binds) != 1:
        raise ValueError(f"expected one bind line in haproxy.cfg, found {len(binds)}")
    n = len(_SERVER.findall(text))
    if n != len(server_ports):
        raise ValueError(f"haproxy.cfg has {n} server lines, {len(server_ports)} ports given")
    text = _BIND.sub(lambda m: f"{m.group(1)}127.0.0.1:{bind_port}{m.group(3)}", text)
    ports = iter(server_ports)
    return _SERVER.sub(lambda m: f"{m.group(1)}127.0.0.1:{next(ports)}{m.group(4)}", text)


class HAProxy:
    """Debian's haproxy (foreground, ``-db``) with deploy/haproxy.cfg pointed at loopback."""

    def __init__(self, server_ports: list[int], log: Path | None = None) -> None:
        from stclient import free_port  # bench/ is on sys.path for the bench scripts

        self.port = free_port()
        self.server_ports = list(server_ports)
        self.dir = Path(tempfile.mkdtemp(prefix="attnviz-haproxy-"))
        self.cfg = self.dir / "haproxy.cfg"
        self.cfg.write_text(loopback_config(HAPROXY_CFG.read_text(), self.port, self.server_ports))
        self.log_path = log or self.dir / "haproxy.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def start(self, timeout: float = 20.0) -> HAProxy:
        exe = haproxy_exe()
        if exe is None:
            raise RuntimeError("haproxy is not installed (apt-get install haproxy)")
        check = subprocess.run([exe, "-c", "-f", str(self.cfg)], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy -c rejected the config:\n{check.stdout}{check.stderr}")
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(
                [exe, "-db", "-f", str(self.cfg)], stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"haproxy exited {self.proc.returncode}:\n{self.output()}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"haproxy did not answer on {self.url}:\n{self.output()}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)


class Hall:
    """``len(servers())`` replicas of ``app`` sharing one cookie secret, behind HAProxy."""

    def __init__(self, app: str = "serve.py", options: dict | None = None) -> None:
        from stclient import Server  # bench/ is on sys.path for the bench scripts

        self.secret = secrets.token_hex(32)
        self.names = [name for name, _ in servers()]
        env = {SECRET_ENV: self.secret}
        self.replicas = [Server(app, options=options, env=env) for _ in self.names]
        self.proxy: HAProxy | None = None

    def start(self) -> Hall:
        try:
            for r in self.replicas:
                r.start()
            self.proxy = HAProxy([r.port for r in self.replicas]).start()
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def url(self) -> str:
        assert self.proxy is not None
        return self.proxy.url

    def kill(self, i: int) -> None:
        """SIGKILL replica i (a crash: no goodbye to its websockets)."""
        proc = self.replicas[i].proc
        if proc and proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)

    def stop(self) -> None:
        if self.proxy:
            self.proxy.stop()
        for r in self.replicas:
            r.stop()

    def __enter__(self) -> Hall:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
