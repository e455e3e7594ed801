"""A lecture hall on this machine: Debian's haproxy with deploy/haproxy.cfg (addresses made
loopback, :func:`loopback_config`) in front of attnviz replicas; :func:`servers` derives each
replica's SERVERID cookie as haproxy does (tests/test_deploy.py checks it). Their shared
database: :class:`PgCluster`, a throwaway PostgreSQL cluster on loopback (Debian's
``postgresql``, trust auth; bench/pgcluster.py until issue 49).
"""

from __future__ import annotations

import contextlib
import csv
import glob
import io
import ipaddress
import itertools
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import kit
import xxhash

HAPROXY_CFG = kit.REPO / "deploy" / "haproxy.cfg"
COOKIE = "SERVERID"
SECRET_ENV = "STREAMLIT_SERVER_COOKIE_SECRET"
#: A header naming a request (phone.request, bench/class_hall.py) that the replicas ignore.
TAG_HEADER = "X-Bench-Request"
# Replicas in a hall on this machine: as many as deploy/compose.yaml starts by default.
REPLICAS = 3

_BIND = re.compile(r"^([ \t]*bind[ \t]+)(\S+)(.*)$", re.M)
_SERVER = re.compile(r"^[ \t]*server[ \t]+(\S+)[ \t]+(\S+)(.*)$", re.M)
# server-template <prefix> <count | first-last> <fqdn>[:port] [options]
_TEMPLATE = re.compile(
    r"^([ \t]*)server-template[ \t]+(\S+)[ \t]+(\d+)(?:-(\d+))?[ \t]+(\S+)(.*)$", re.M
)
_SECTION = re.compile(r"^(global|defaults|frontend|backend|listen|resolvers|peers)\b", re.M)


def haproxy_exe() -> str | None:
    """Debian's haproxy: on PATH or in /usr/sbin; None if it is not installed."""
    exe = shutil.which("haproxy")
    if exe is None and Path("/usr/sbin/haproxy").exists():
        exe = "/usr/sbin/haproxy"
    return exe


def dynamic_cookie(key: str, address: str, port: int) -> str:
    """haproxy's cookie under ``cookie ... dynamic`` (``srv_set_dyncookie``): XXH64 (the
    hash haproxy derives it with) of the key, the packed IP address and the port (4 bytes,
    big-endian), as 16 hex digits."""
    ip = ipaddress.ip_address(address).packed
    return xxhash.xxh64_hexdigest(key.encode() + ip + port.to_bytes(4, "big"))


def sections(text: str) -> dict[str, str]:
    """The config's sections by header (``"backend attnviz"``, ``"defaults"``), each with
    the lines below its header."""
    starts = [m.start() for m in _SECTION.finditer(text)] + [len(text)]
    out = {}
    for a, b in itertools.pairwise(starts):
        header, _, body = text[a:b].partition("\n")
        out[" ".join(header.split()[:2])] = body
    return out


def sticky_backend(text: str | None = None) -> str:
    """The header of the one backend that keeps a browser on a replica by cookie."""
    text = HAPROXY_CFG.read_text() if text is None else text
    found = [h for h, body in sections(text).items() if re.search(r"^\s*cookie\s", body, re.M)]
    if len(found) != 1 or not found[0].startswith("backend "):
        raise ValueError(f"expected one backend with a cookie line in haproxy.cfg, found {found}")
    return found[0]


def templates(text: str | None = None) -> list[tuple[str, str, list[str], str]]:
    """(section, prefix, the names of its servers, fqdn:port) of every ``server-template``."""
    text = HAPROXY_CFG.read_text() if text is None else text
    out = []
    for header, body in sections(text).items():
        for m in _TEMPLATE.finditer(body):
            first, last = (int(m.group(3)), int(m.group(4))) if m.group(4) else (1, int(m.group(3)))
            names = [f"{m.group(2)}{i}" for i in range(first, last + 1)]
            out.append((header, m.group(2), names, m.group(5)))
    return out


def servers(text: str | None = None) -> list[tuple[str, str]]:
    """(name, cookie) of every ``server`` line of the sticky backend, in order: its own
    ``cookie``, or under ``cookie ... dynamic`` :func:`dynamic_cookie` of its address ("" for
    a DNS name; the shipped templates give no ``server`` line: :func:`loopback_config`)."""
    text = HAPROXY_CFG.read_text() if text is None else text
    body = sections(text)[sticky_backend(text)]
    dynamic = re.search(r"^\s*cookie\s.*\bdynamic\b", body, re.M)
    key = re.search(r"^\s*dynamic-cookie-key\s+(\S+)", body, re.M)
    out = []
    for m in _SERVER.finditer(body):
        own = re.search(r"\bcookie\s+(\S+)", m.group(3))
        host, _, port = m.group(2).rpartition(":")
        if own:
            cookie = own.group(1)
        elif dynamic and key and re.fullmatch(r"[\d.]+|\[[\da-fA-F:]+\]", host):
            cookie = dynamic_cookie(key.group(1), host.strip("[]"), int(port))
        else:
            cookie = ""
        out.append((m.group(1), cookie))
    return out


def loopback_config(text: str, bind_port: int, server_ports: list[int]) -> str:
    """deploy/haproxy.cfg with its ``bind`` on 127.0.0.1:bind_port and each
    ``server-template`` as one ``server`` line per port, named as the template would."""
    binds = _BIND.findall(text)
    if len(binds) != 1:
        raise ValueError(f"expected one bind line in haproxy.cfg, found {len(binds)}")
    found = templates(text)
    if not found or _SERVER.search(text):
        raise ValueError("expected server-template lines and no server line in haproxy.cfg")
    if not server_ports or any(len(names) < len(server_ports) for _, _, names, _ in found):
        slots = [len(names) for _, _, names, _ in found]
        raise ValueError(
            f"haproxy.cfg's server-template slots {slots}, {len(server_ports)} ports given"
        )

    def expand(m: re.Match) -> str:
        indent, prefix, first = m.group(1), m.group(2), int(m.group(3)) if m.group(4) else 1
        return "\n".join(
            f"{indent}server {prefix}{first + i} 127.0.0.1:{port}{m.group(6)}"
            for i, port in enumerate(server_ports)
        )

    text = _BIND.sub(lambda m: f"{m.group(1)}127.0.0.1:{bind_port}{m.group(3)}", text)
    return _TEMPLATE.sub(expand, text)


class HAProxy(kit.Service):
    """Debian's haproxy (foreground, ``-db``) with deploy/haproxy.cfg pointed at loopback;
    ``bench``: also a stats socket (the requests each replica holds: :meth:`held`) and a
    capture of the bench's request tag (its log names each request: bench/class_hall.py)."""

    def __init__(self, server_ports: list[int], bench: bool = False) -> None:
        self.port = kit.free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="attnviz-haproxy-"))
        self.cfg, self.sock = self.dir / "haproxy.cfg", self.dir / "stats.sock"
        text = loopback_config(HAPROXY_CFG.read_text(), self.port, list(server_ports))
        if bench:
            sock = f"global\n    stats socket {self.sock} mode 600 level user\n"
            text = re.sub(r"^global[ \t]*\n", sock, text, count=1, flags=re.M)
            tag = rf"\1    capture request header {TAG_HEADER} len 24\n"
            text = re.sub(r"^(frontend[ \t]+\S+[ \t]*\n)", tag, text, count=1, flags=re.M)
        self.cfg.write_text(text)
        self.servers = servers(text)  # (name, SERVERID cookie) of each replica, as ports go
        self.log_path = self.dir / "haproxy.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cookies(self) -> list[str]:
        """The SERVERID value of each replica, in the order of ``server_ports``."""
        return [cookie for _, cookie in self.servers]

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
        try:
            kit.wait_http(self.url + "/_stcore/health", self.proc, timeout, "haproxy")
        except RuntimeError as exc:
            output = self.log_path.read_text(errors="replace")  # before stop() removes it
            self.stop()
            raise RuntimeError(f"{exc}:\n{output}") from None
        return self

    def stop(self) -> None:
        kit.stop(self.proc)
        shutil.rmtree(self.dir, ignore_errors=True)

    def held(self) -> dict[str, int]:
        """Current requests per server, from the stats socket (empty without one)."""
        data = b""
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(str(self.sock))
            s.sendall(b"show stat\n")
            while chunk := s.recv(65536):
                data += chunk
        rows = csv.DictReader(io.StringIO(data.decode(errors="replace").lstrip("# ")))
        skip = (None, "", "FRONTEND", "BACKEND")
        return {r["svname"]: int(r["scur"]) for r in rows if r["svname"] not in skip and r["scur"]}


INSTALL_HINT = "apt-get install postgresql (Debian's package: initdb and pg_ctl)"


def pg_bindir() -> Path | None:
    """Debian's newest /usr/lib/postgresql/<version>/bin, else the PATH's initdb; or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    exe = shutil.which("initdb")
    return Path(exe).parent if exe else None


class PgCluster(kit.Service):
    """A cluster in a temporary directory, started on a free loopback port."""

    def __init__(self, durable: bool = True) -> None:
        """``durable=False``: fsync off (tests: faster, nothing survives a machine crash)."""
        bindir = pg_bindir()
        if bindir is None:
            raise RuntimeError(f"PostgreSQL is not installed ({INSTALL_HINT})")
        self.bindir = bindir
        self.port = kit.free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="attnviz-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"
        self.as_root = os.geteuid() == 0
        self.durable = durable

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *argv: str) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / argv[0]), *argv[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )

    def start(self) -> PgCluster:
        if self.as_root:  # the postgres user owns the directory (its parent stays readable)
            pw = pwd.getpwnam("postgres")
            os.chmod(self.dir, 0o755)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        r = self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8")
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{r.stdout}{r.stderr}")
        opts = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.dir}"
            " -c max_connections=200"
        ) + ("" if self.durable else " -c fsync=off")
        # -w: until the server accepts connections (its sockets listen before it says ready)
        r = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", opts, "-w",
                      "-t", "60", "start")  # fmt: skip
        if r.returncode != 0:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            raise RuntimeError(f"pg_ctl start failed:\n{r.stdout}{r.stderr}\n{log}")
        return self

    def stop(self) -> None:
        if self.data.exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)
