"""Build the Dockerfile with podman and run the image's filesystem (tests/e2e/test_image.py).

No container registry is reachable from the test machines and podman cannot start
containers here (its runtime is refused ``setrlimit``), so:

* The Dockerfile's base (``FROM python:3.11.7-slim``) is a local STAND-IN with the same
  name: Debian bookworm (what the official ``python:3.11-slim`` images are built on) made by
  ``debootstrap --variant=minbase`` with python3, python3-pip, passwd and ca-certificates,
  ``python``/``pip`` linked into ``/usr/local/bin``, Debian's ``EXTERNALLY-MANAGED`` marker
  removed, the host's pip configuration and CA bundle copied in, and ``podman import``-ed
  with ``PATH``/``LANG`` as in the official image. How it differs from the official image:
  its Python is Debian's 3.11.2 (``/usr/bin/python3``, pip 23.0.1), not 3.11.7 built from
  source in ``/usr/local``; pip installs into ``/usr/local/lib/python3.11/dist-packages``
  instead of ``site-packages``; and it carries Debian's python3-pip dependencies
  (setuptools, wheel). The stand-in is kept in podman's storage (labelled
  ``attnviz.standin``) and reused by later runs on the same machine.
* ``podman build --isolation=chroot --network=host`` builds the real Dockerfile on it.
* The image runs without a container runtime: ``podman image mount``, a writable overlay on
  top (a container's own layer), ``/proc`` and ``/dev``, then ``chroot --userspec=<USER>``
  with the image's ``WorkingDir``, ``Env``, ``Entrypoint`` and ``Cmd`` from
  ``podman image inspect``, on a free loopback port.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
STANDIN_LABEL = "attnviz.standin"
DEBIAN_SUITE = "bookworm"
DEBIAN_PACKAGES = "python3,python3-pip,passwd,ca-certificates"
# The official python:3.11-slim image's PATH and LANG.
IMAGE_PATH = "/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LOCK = Path(tempfile.gettempdir()) / "attnviz-podman-standin.lock"


def run(cmd: list[str], timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    """Run a command, raise with its output when it fails."""
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if result.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} exited {result.returncode}:\n{result.stdout[-4000:]}\n"
            f"{result.stderr[-4000:]}"
        )
    return result


def missing_tools() -> list[str]:
    return [t for t in ("podman", "debootstrap", "chroot", "mount") if not shutil.which(t)]


def base_image_name() -> str:
    """The Dockerfile's FROM, fully qualified the way podman names a Docker Hub image."""
    froms = [
        ln.split()[1]
        for ln in DOCKERFILE.read_text().splitlines()
        if ln.strip().upper().startswith("FROM ")
    ]
    assert len(froms) == 1, f"expected one FROM in the Dockerfile: {froms}"
    name = froms[0]
    if "/" not in name:
        name = f"library/{name}"
    if name.count("/") == 1:
        name = f"docker.io/{name}"
    return name


def debian_mirror() -> str:
    """The host's Debian mirror (apt sources), deb.debian.org when none is found."""
    texts = []
    for path in [Path("/etc/apt/sources.list"), *Path("/etc/apt/sources.list.d").glob("*")]:
        with contextlib.suppress(OSError):
            texts.append(path.read_text())
    for text in texts:
        for m in re.finditer(r"(?:URIs:|^deb)\s+(?:\[[^]]*\]\s+)?(\S+/debian)/?\s", text, re.M):
            return m.group(1)
    return "http://deb.debian.org/debian"


# --------------------------------------------------------------------------- pip settings


@dataclass
class PipSettings:
    """The host's effective pip configuration (config files and PIP_* variables), as one
    ``[global]`` pip.conf, plus the host files and directories it refers to."""

    conf: str
    files: list[Path]  # copied into the stand-in at the same path (cert, constraints)
    dirs: list[Path]  # bind-mounted read-only into the build (find-links, file:// indexes)


def host_pip_settings(python: str = sys.executable) -> PipSettings:
    out = run([python, "-m", "pip", "config", "list"], timeout=60).stdout
    values: dict[str, str] = {}
    from_env: dict[str, str] = {}  # PIP_* variables win over the files, as in pip
    for line in out.splitlines():
        m = re.match(r"^(:env:|[\w-]+)\.([\w-]+)='(.*)'$", line.strip())
        if m:
            (from_env if m.group(1) == ":env:" else values)[m.group(2)] = m.group(3)
    values.update(from_env)
    files: list[Path] = []
    dirs: list[Path] = []
    for key in ("cert", "client-cert", "constraint", "requirement"):
        for item in values.get(key, "").split():
            if Path(item).is_file():
                files.append(Path(item))
    for key in ("find-links", "index-url", "extra-index-url"):
        for item in values.get(key, "").split():
            path = Path(urlparse(item).path) if item.startswith("file:") else Path(item)
            if (item.startswith("file:") or item.startswith("/")) and path.is_dir():
                dirs.append(path)
    # A local index's pages link to files beside it (../../files): mount its parent.
    dirs = sorted({d.parent if d.name == "simple" else d for d in dirs})
    conf = "[global]\n" + "".join(f"{k} = {v}\n" for k, v in sorted(values.items()))
    return PipSettings(conf, files, dirs)


# --------------------------------------------------------------------------- stand-in


def image_exists(name: str) -> bool:
    return subprocess.run(["podman", "image", "exists", name]).returncode == 0


def inspect(name: str) -> dict:
    return json.loads(run(["podman", "image", "inspect", name]).stdout)[0]


def ensure_standin(pip: PipSettings, log=print) -> tuple[str, bool]:
    """Make the stand-in base unless podman already has an image of that name.
    Returns (name, built now)."""
    name = base_image_name()
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # other test runs on this machine build it too
        if image_exists(name):
            return name, False
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="attnviz-standin-") as tmp:
            rootfs = Path(tmp) / "rootfs"
            run(
                [
                    "debootstrap",
                    "--variant=minbase",
                    f"--include={DEBIAN_PACKAGES}",
                    DEBIAN_SUITE,
                    str(rootfs),
                    debian_mirror(),
                ],
                timeout=900,
            )
            for link, target in (
                ("python", "/usr/bin/python3"),
                ("python3", "/usr/bin/python3"),
                ("pip", "/usr/bin/pip3"),
                ("pip3", "/usr/bin/pip3"),
            ):
                dest = rootfs / "usr/local/bin" / link
                dest.unlink(missing_ok=True)
                dest.symlink_to(target)
            for marker in rootfs.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
                marker.unlink()
            for src in pip.files:  # the CA bundle and a constraints file
                dest = rootfs / src.relative_to("/")
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.unlink(missing_ok=True)
                shutil.copy2(src, dest)
            (rootfs / "etc/pip.conf").write_text(pip.conf)
            for d in ("var/cache/apt/archives", "var/lib/apt/lists"):
                for f in (rootfs / d).glob("*"):
                    if f.is_file():
                        f.unlink()
            tar = subprocess.Popen(
                ["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."],
                stdout=subprocess.PIPE,
            )
            run(
                [
                    "podman",
                    "import",
                    "--change",
                    f"ENV PATH={IMAGE_PATH}",
                    "--change",
                    "ENV LANG=C.UTF-8",
                    "--change",
                    f"LABEL {STANDIN_LABEL}=debootstrap-{DEBIAN_SUITE}",
                    "--change",
                    'CMD ["python3"]',
                    "-",
                    name,
                ],
                stdin=tar.stdout,
            )
            tar.wait()
        log(f"stand-in base {name} built in {time.monotonic() - t0:.0f} s")
        return name, True


def build(tag: str, pip: PipSettings) -> float:
    """podman build the project's Dockerfile (no registry: --pull=never). Returns seconds."""
    volumes = [a for d in pip.dirs for a in ("--volume", f"{d}:{d}:ro")]
    t0 = time.monotonic()
    run(
        [
            "podman",
            "build",
            "--isolation=chroot",
            "--network=host",
            "--pull=never",
            *volumes,
            "-t",
            tag,
            "-f",
            str(DOCKERFILE),
            str(ROOT),
        ],
        timeout=1200,
    )
    return time.monotonic() - t0


def image_size(name: str) -> int:
    return int(inspect(name)["Size"])


# --------------------------------------------------------------------------- run the image


@dataclass
class ImageConfig:
    user: str
    workdir: str
    env: list[str]
    entrypoint: list[str]
    cmd: list[str]

    @classmethod
    def of(cls, name: str) -> ImageConfig:
        cfg = inspect(name)["Config"]
        return cls(
            user=cfg.get("User") or "",
            workdir=cfg.get("WorkingDir") or "/",
            env=list(cfg.get("Env") or []),
            entrypoint=list(cfg.get("Entrypoint") or []),
            cmd=list(cfg.get("Cmd") or []),
        )


@contextlib.contextmanager
def image_rootfs(name: str) -> Iterator[Path]:
    """The image's filesystem with a writable layer on top, /proc and /dev: a container's
    root without the runtime. Everything is unmounted on exit."""
    mounted = run(["podman", "image", "mount", name]).stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="attnviz-image-"))
    root, upper, work = tmp / "root", tmp / "upper", tmp / "work"
    for d in (root, upper, work):
        d.mkdir()
    stack: list[Path] = []
    try:
        run(
            [
                "mount",
                "-t",
                "overlay",
                "overlay",
                "-o",
                f"lowerdir={mounted},upperdir={upper},workdir={work}",
                str(root),
            ]
        )
        stack.append(root)
        (root / "proc").mkdir(exist_ok=True)
        run(["mount", "-t", "proc", "proc", str(root / "proc")])
        stack.append(root / "proc")
        (root / "dev").mkdir(exist_ok=True)
        run(["mount", "--bind", "/dev", str(root / "dev")])
        stack.append(root / "dev")
        yield root
    finally:
        for path in reversed(stack):
            if subprocess.run(["umount", str(path)]).returncode != 0:
                subprocess.run(["umount", "-l", str(path)])
        subprocess.run(["podman", "image", "unmount", name], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def chroot_command(root: Path, cfg: ImageConfig, extra: list[str]) -> list[str]:
    """The image's start command run in ``root`` as the image's USER, in its WorkingDir,
    with exactly its Env (``env -i``)."""
    user = cfg.user or "0:0"
    if ":" not in user:
        user = f"{user}:{user}"
    return [
        "chroot",
        f"--userspec={user}",
        str(root),
        "/usr/bin/env",
        "-i",
        f"--chdir={cfg.workdir}",
        *cfg.env,
        *cfg.entrypoint,
        *cfg.cmd,
        *extra,
    ]
