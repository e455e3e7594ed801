"""The Docker image, built and run: ``podman build`` of the project's Dockerfile on a local
stand-in of its base image, then the image's own start command, user, working directory and
environment run from its filesystem (tests/e2e/podman_image.py says how and why).

THE BASE IS A STAND-IN: Debian bookworm + Debian's python3 3.11.2 and pip 23.0.1, not the
official python:3.11.7-slim (Python 3.11.7 built from source in /usr/local). Same Debian
release, same image name, same PATH; packages land in dist-packages instead of site-packages.

Checks: /_stcore/health answers ok; every page of the pages table (attnviz.ui.pages) loads
in headless Chromium with no exception, the pages that run a model draw their charts with no
connection off the machine; the server runs as the image's non-root USER; the image holds nothing of
tests/, bench/, .git; the image size above its base is written to artifacts/image.json.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
import urllib.request
from pathlib import Path

import podman_image as pi
import psutil
import pytest
from e2e_app import ROOT, BrowserSession, start_app_server, stop_app_server, unavailable
from e2e_helpers import alerts, click_page, nav_titles

from attnviz.ui import pages as ui_pages

# The first test's setup makes the stand-in base (~1 min on a fresh machine) and builds the
# image (~1 min, longer when pip downloads from PyPI): more than the suite's 300 s default
# is allowed for it.
pytestmark = [pytest.mark.image, pytest.mark.timeout(900)]

ARTIFACTS = ROOT / "artifacts"
# One tag per checkout (several worktrees test on one machine): rebuilt by every run, the
# previous image of the tag removed when the new one replaces it.
TAG = "localhost/attnviz-imagetest:" + hashlib.sha1(str(ROOT).encode()).hexdigest()[:10]


def app_pages() -> tuple[list[tuple[str, str]], set[str]]:
    """(file, title) of every page of the pages table (attnviz.ui.pages.PAGES), and the
    files of those that run a model."""
    pages = [(p.file, p.title) for p in ui_pages.PAGES]
    return pages, {p.file for p in ui_pages.PAGES if p.runs_model}


@pytest.fixture(scope="module")
def image():
    missing = pi.missing_tools()
    if missing:
        unavailable(f"missing {missing} (apt-get install podman debootstrap)")
    if os.geteuid() != 0:
        unavailable("building the stand-in base and mounting the image need root")
    pip = pi.host_pip_settings()
    base, built_base = pi.ensure_standin(pip)
    old = pi.inspect(TAG)["Id"] if pi.image_exists(TAG) else None
    seconds = pi.build(TAG, pip)
    new = pi.inspect(TAG)["Id"]
    if old and old != new:  # our own previous build, now untagged
        subprocess.run(["podman", "rmi", old], capture_output=True)
    base_size, size = pi.image_size(base), pi.image_size(TAG)
    report = {
        "base": base,
        "base_is_standin": pi.STANDIN_LABEL in (pi.inspect(base)["Config"].get("Labels") or {}),
        "base_built_now": built_base,
        "build_seconds": round(seconds, 1),
        "base_mb": round(base_size / 1e6),
        "image_mb": round(size / 1e6),
        "above_base_mb": round((size - base_size) / 1e6),
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "image.json").write_text(json.dumps(report, indent=1))
    print(f"\nimage {TAG}: {report}")
    return TAG


@pytest.fixture(scope="module")
def config(image) -> pi.ImageConfig:
    return pi.ImageConfig.of(image)


@pytest.fixture(scope="module")
def rootfs(image):
    with pi.image_rootfs(image) as root:
        yield root


@pytest.fixture(scope="module")
def server(rootfs, config):
    """The image's ENTRYPOINT + CMD, as its USER, in its WorkingDir, with only its Env; the
    address flag appended, and the port flag after it (later flags win), to keep it on a
    free loopback port."""
    command = pi.chroot_command(rootfs, config, ["--server.address=127.0.0.1"])
    srv = start_app_server(command=command, timeout=120)
    yield srv
    stop_app_server(srv)
    out = srv.output()
    assert "Traceback (most recent call last)" not in out, out


def test_health_endpoint_says_ok(server):
    with urllib.request.urlopen(server.url + "/_stcore/health", timeout=5) as r:
        assert r.status == 200 and r.read() == b"ok"


def test_the_server_runs_as_the_images_non_root_user(server, config):
    uid = config.user.split(":")[0]
    assert uid and uid not in ("0", "root"), f"the image's USER is {config.user!r}"
    proc = psutil.Process(server.proc.pid)
    assert proc.name().startswith(("streamlit", "python"))
    assert proc.uids().real == proc.uids().effective == int(uid) != 0


def test_the_image_holds_the_app_and_nothing_of_tests_bench_git(rootfs, config):
    workdir = rootfs / config.workdir.lstrip("/")
    names = {p.name for p in workdir.iterdir()}
    assert {"app.py", "attnviz", "pages", ".streamlit"} <= names
    assert not names & {"tests", "bench", ".git", "scripts", "deploy", "notes", ".venv"}
    assert not list(workdir.rglob("test_*.py")) and not list(workdir.rglob("conftest.py"))
    for top in ("", "root", "home", "tmp", "opt"):
        found = [p for p in (rootfs / top).glob(".git")] + list((rootfs / top).glob("bench"))
        assert not found, found


def test_every_page_loads_and_model_pages_work_offline(browser, server):
    pages, model_pages = app_pages()
    remote: list[str] = []
    stop = threading.Event()

    def watch() -> None:  # every socket of the server process: loopback only
        proc = psutil.Process(server.proc.pid)
        while not stop.wait(0.05):
            try:
                conns = proc.net_connections(kind="inet")
            except psutil.Error:
                return
            for c in conns:
                if c.raddr and not c.raddr.ip.startswith(("127.", "::1", "::ffff:127.")):
                    remote.append(f"{c.raddr.ip}:{c.raddr.port} ({c.status})")

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    session = BrowserSession(browser, server)
    try:
        session.open("/")
        assert nav_titles(session) == [title for _, title in pages]
        for path, title in pages:
            click_page(session, title)
            session.assert_healthy(f"{title} in the image")
            session.screenshot("image_" + Path(path).stem, full=False)  # artifacts/screenshots
            if path in model_pages:
                assert not alerts(session, "Error"), alerts(session, "Error")
                assert session.plotly_count() > 0, f"{title}: no chart in the image"
        assert any(p in model_pages for p, _ in pages), "no model page in the table"
    finally:
        stop.set()
        watcher.join(5)
        session.close()
    assert not remote, f"the server opened connections off the machine: {sorted(set(remote))}"
