"""A throwaway PostgreSQL cluster on loopback (Debian's ``postgresql``), trust auth::

with PgCluster() as pg:
    store = ClassStore(pg.url)
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import kit

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
