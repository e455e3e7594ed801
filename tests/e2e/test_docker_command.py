"""The Docker image's start command, run outside Docker (no engine here), in a directory laid
out like the image's WORKDIR (only what the Dockerfile COPYs), loaded in a browser."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from e2e_app import ROOT, BrowserSession, start_app_server, stop_app_server
from plotly.offline import get_plotlyjs_version

from tests.test_serving import _args, _instructions, start_command

pytestmark = pytest.mark.e2e


def image_workdir(dest: Path) -> Path:
    """Copy what the Dockerfile's COPY instructions copy, to where they copy it."""
    for keyword, rest in _instructions():
        if keyword != "COPY":
            continue
        *sources, target = _args(rest)
        for src in sources:
            path = ROOT / src.rstrip("/")
            if path.is_dir():
                ignore = shutil.ignore_patterns("__pycache__")
                shutil.copytree(path, dest / target, ignore=ignore)
            elif target.endswith("/"):
                (dest / target).mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, dest / target / path.name)
            else:
                shutil.copy2(path, dest / target)
    return dest


@pytest.fixture(scope="module")
def app_server(tmp_path_factory):
    """Overrides conftest's server: the Dockerfile's ENTRYPOINT/CMD as written (0.0.0.0),
    with this environment's streamlit and a free port, in a copy of the image's files."""
    workdir = image_workdir(tmp_path_factory.mktemp("image"))
    command = start_command()
    assert command[0] == "streamlit"
    streamlit = Path(sys.executable).with_name("streamlit")
    server = start_app_server(command=[str(streamlit), *command[1:]], cwd=workdir)
    yield server
    stop_app_server(server)
    out = server.output()
    server.log_path.unlink(missing_ok=True)
    assert "Traceback (most recent call last)" not in out, out


def test_the_image_files_are_enough(tmp_path):
    workdir = image_workdir(tmp_path)
    names = sorted(p.name for p in workdir.iterdir())
    assert names == sorted(
        [
            ".streamlit",
            "app.py",
            "attnviz",
            "pages",
            "pyproject.toml",
            "README.md",
            "requirements.txt",
            "requirements-model.txt",
            "serve.py",
        ]
    )
    assert not list(workdir.rglob("test_*.py"))


def test_every_page_runs_from_the_image_files(browser, app_server):
    session = BrowserSession(browser, app_server)
    try:
        session.open("/")
        session.assert_healthy("the Docker start command's first page")
        assert session.plotly_count() > 0
        # The chart board's files (and the installed plotly.js) are served by this server.
        boards = session.page.evaluate(
            """() => ({boards: document.querySelectorAll('.attnviz-board .js-plotly-plot').length,
              src: Array.from(document.querySelectorAll('script[data-attnviz="plotly"]'))
                .map(s => s.dataset.url || s.src),
              plotly: window.Plotly ? window.Plotly.version : null})"""
        )
        assert boards["boards"], "no chart board on the first page"
        assert len(boards["src"]) == 1 and boards["src"][0].startswith(app_server.url), boards
        assert boards["plotly"] == get_plotlyjs_version(), boards
        # One page switch (the last page): every page from the image's files is walked by
        # tests/e2e/test_image.py, on the image itself.
        links = session.page.locator('[data-testid="stSidebarNavLink"]')
        session.rerun_after(links.nth(links.count() - 1).click)
        session.assert_healthy("the last page from the image's files")
        # The image's .streamlit/config.toml applies: viewers get no developer menu.
        session.page.get_by_test_id("stMainMenu").click()
        menu = session.page.get_by_test_id("stMainMenuPopover").inner_text()
        assert "Clear cache" not in menu and "Rerun" not in menu
    finally:
        session.close()
