"""The ``attnviz`` command (attnviz/cli.py): what it runs, in the checkout's layout; the
installed layout is tested in tests/test_package.py."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from streamlit.web import cli as streamlit_cli

from attnviz import cli

ROOT = Path(__file__).resolve().parents[1]


def parsed(command: list[str]) -> dict:
    """``streamlit run``'s options as its own parser reads them (nothing is started)."""
    i = command.index("run")
    ctx = streamlit_cli.main_run.make_context("run", command[i + 1 :])
    return ctx.params


def test_config_options_flatten_a_config_toml(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[server]\nheadless = true\nmaxUploadSize = 1\n[client]\nx = "viewer"\n')
    assert cli.config_options(config) == [
        "--server.headless=true",
        "--server.maxUploadSize=1",
        "--client.x=viewer",
    ]
    assert cli.config_options(tmp_path / "absent.toml") == []


def test_the_command_runs_the_checkouts_app_with_its_settings_then_the_callers():
    cmd = cli.streamlit_command(["--server.port", "8642", "--server.maxUploadSize", "5"])
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert Path(cmd[4]) == ROOT / "serve.py"
    settings = cli.config_options(ROOT / ".streamlit" / "config.toml")
    assert len(settings) >= 15 and cmd[5 : 5 + len(settings)] == settings
    params = parsed(cmd)  # every setting is an option streamlit knows (click refuses others)
    assert params["server_port"] == 8642
    assert params["server_maxUploadSize"] == 5  # the caller's value wins over the config's 1
    assert params["server_enableXsrfProtection"] is True  # the config's safe defaults apply
    assert params["client_toolbarMode"] == "viewer"
    assert params["runner_postScriptGC"] is False


def test_version_and_help(capsys):
    with (ROOT / "pyproject.toml").open("rb") as f:
        version = tomllib.load(f)["project"]["version"]
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"attnviz {version}\n"
    assert cli.main(["--help"]) == 0
    assert "streamlit run" in capsys.readouterr().out


def test_without_the_app_it_says_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "PACKAGE_DIR", tmp_path / "attnviz")
    with pytest.raises(FileNotFoundError, match="reinstall attnviz"):
        cli.app_dir()
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "attnviz" / "app") in err and str(tmp_path) in err
