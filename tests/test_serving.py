"""Safe serving: the Streamlit config, the Dockerfile and its start command, unsafe HTML.

No Docker engine runs on the test machines, so the image's own start command (the
Dockerfile's ENTRYPOINT/CMD) is run here outside Docker, on a free port, and probed over HTTP.
"""

from __future__ import annotations

import ast
import ctypes
import http.client
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".streamlit" / "config.toml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
APP_SOURCES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))] + sorted(
    (ROOT / "attnviz").rglob("*.py")
)


# --------------------------------------------------------------------------- config.toml


@pytest.fixture(scope="module")
def config() -> dict:
    with CONFIG.open("rb") as f:
        return tomllib.load(f)


def test_config_serves_headless_without_usage_stats(config):
    assert config["server"]["headless"] is True
    assert config["browser"]["gatherUsageStats"] is False


def test_config_keeps_xsrf_and_cors_protection_on(config):
    # Both default to true in Streamlit; the config states them so nobody turns them off
    # by accident, and nothing weakens them elsewhere in the file.
    assert config["server"]["enableXsrfProtection"] is True
    assert config["server"]["enableCORS"] is True
    assert "corsAllowedOrigins" not in config["server"]


def test_config_bounds_uploads_and_messages(config):
    assert config["server"]["maxUploadSize"] == 1  # MB: a CSV of X is a few kB
    assert 1 <= config["server"]["maxMessageSize"] <= 50  # MB (Streamlit's default is 200)


def test_config_turns_off_static_serving_and_developer_tools(config):
    assert config["server"]["enableStaticServing"] is False
    assert config["client"]["toolbarMode"] in {"viewer", "minimal"}
    # Uncaught errors never show a traceback (code paths) to viewers.
    assert config["client"]["showErrorDetails"] in {"type", "none"}
    assert config["server"].get("enableAgentApi", False) is False


def test_config_values_are_accepted_by_streamlit(config):
    """Every key exists in this Streamlit version (a typo would be silently ignored)."""
    from streamlit import config as st_config

    options = st_config.get_config_options()
    for section, values in config.items():
        for key in values:
            assert f"{section}.{key}" in options, f"unknown Streamlit option {section}.{key}"


# --------------------------------------------------------------------------- Dockerfile


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with line continuations joined and comments dropped."""
    text = DOCKERFILE.read_text()
    logical, buf = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        buf += stripped
        logical.append(buf)
        buf = ""
    out = []
    for entry in logical:
        keyword, _, rest = entry.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    return out


def _args(rest: str) -> list[str]:
    rest = rest.strip()
    return json.loads(rest) if rest.startswith("[") else shlex.split(rest)


def start_command() -> list[str]:
    """The container's start command: ENTRYPOINT followed by CMD, as Docker combines them."""
    entry, cmd = [], []
    for keyword, rest in _instructions():
        if keyword == "ENTRYPOINT":
            entry = _args(rest)
        elif keyword == "CMD":
            cmd = _args(rest)
    return entry + cmd


def test_dockerfile_base_image_is_pinned_to_the_tested_python():
    froms = [rest for keyword, rest in _instructions() if keyword == "FROM"]
    assert len(froms) == 1
    expected = "python:{}.{}.{}-slim".format(*sys.version_info[:3])
    assert froms[0] == expected, f"pin the base image to the Python the tests run on: {expected}"


def test_dockerfile_installs_runtime_requirements_only():
    runs = " ".join(rest for keyword, rest in _instructions() if keyword == "RUN")
    assert "-r requirements.txt" in runs
    assert "--no-deps -r requirements-model.txt" in runs
    assert "requirements-dev.txt" not in runs
    assert "torch" not in runs


def test_dockerfile_copies_only_what_the_app_needs():
    copied = []
    for keyword, rest in _instructions():
        if keyword == "COPY":
            copied += [a.rstrip("/") for a in _args(rest)[:-1]]
    assert set(copied) == {
        "requirements.txt",
        "requirements-model.txt",
        ".streamlit",
        "attnviz",
        "pages",
        "app.py",
        "serve.py",  # the server: app.py's pages and the live class's /join page
        # the project is installed in the image: Streamlit serves the board's files from an
        # installed distribution (components v2); README.md is pyproject.toml's readme
        "pyproject.toml",
        "README.md",
    }
    for path in copied:
        assert (ROOT / path).exists() or path == "app.py", f"COPY of a missing path: {path}"


def test_dockerignore_keeps_tests_caches_and_git_out():
    ignored = {
        line.strip().rstrip("/")
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    for entry in [".git", ".venv", "tests", "bench", "artifacts", "screenshots", "**/__pycache__"]:
        assert entry in ignored, f".dockerignore misses {entry}"
    assert ".pytest_cache" in ignored and ".ruff_cache" in ignored


def test_dockerfile_runs_as_non_root_and_exposes_8501_with_a_healthcheck():
    instructions = _instructions()
    users = [rest for keyword, rest in instructions if keyword == "USER"]
    assert users, "the image must switch to a non-root user"
    assert users[-1].split(":")[0] not in {"root", "0"}
    # The user switch comes after every install step.
    last_run = max(i for i, (k, _) in enumerate(instructions) if k == "RUN")
    last_user = max(i for i, (k, _) in enumerate(instructions) if k == "USER")
    assert last_user > last_run
    assert ("EXPOSE", "8501") in instructions
    health = [rest for keyword, rest in instructions if keyword == "HEALTHCHECK"]
    assert len(health) == 1 and "/_stcore/health" in health[0] and ":8501" in health[0]
    command = start_command()
    assert command[:3] == ["streamlit", "run", "serve.py"]
    assert "--server.address=0.0.0.0" in command
    assert "--server.port=8501" in command


def test_dockerfile_healthcheck_command_is_valid_python():
    (health,) = [rest for keyword, rest in _instructions() if keyword == "HEALTHCHECK"]
    args = _args(health.split("CMD", 1)[1])
    assert args[:2] == ["python", "-c"]
    compile(args[2], "<healthcheck>", "exec")


# --------------------------------------------------------------------------- the start command


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 5) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@pytest.fixture(scope="module")
def docker_command_server():
    """Run the Dockerfile's start command in the repo dir (the image's WORKDIR holds the same
    files), with `streamlit` from this environment and an added --server.port on a free port
    (a later flag overrides the earlier --server.port=8501)."""
    if not (ROOT / "app.py").exists():
        pytest.fail("app.py is missing: the image's start command cannot run")
    command = start_command()
    streamlit_bin = Path(sys.executable).with_name("streamlit")
    assert command[0] == "streamlit" and streamlit_bin.exists()
    port = free_port()
    argv = [str(streamlit_bin), *command[1:], f"--server.port={port}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    log = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed in the finally below)
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                log.seek(0)
                pytest.fail(f"the start command exited with {proc.returncode}:\n{log.read()}")
            try:
                if _get(url + "/_stcore/health", timeout=2) == (200, b"ok"):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"no /_stcore/health after 90 s:\n{log.read()}")
            time.sleep(0.3)
        yield url, proc, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_start_command_serves_health_and_the_first_page(docker_command_server):
    url, proc, log = docker_command_server
    assert _get(url + "/_stcore/health") == (200, b"ok")
    status, body = _get(url + "/")
    assert status == 200
    assert b'<div id="root">' in body or b"<noscript>" in body
    # every page's URL asks for plotly.js as it loads (attnviz.ui.board.shell)
    for path in ("/", "/multi_head"):
        status, body = _get(url + path)
        assert status == 200 and b"window.__attnvizEarlyPlotly" in body, path
    assert proc.poll() is None


def _tcp_sockets_of(pid: int) -> list[socket.socket]:
    """Copies of process ``pid``'s TCP sockets (Linux's pidfd_getfd: a child of ours, as
    root or under the same user; the caller closes them)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd_open, pidfd_getfd = 434, 438  # the same number on every Linux architecture
    pidfd = libc.syscall(pidfd_open, pid, 0)
    assert pidfd >= 0, f"pidfd_open: errno {ctypes.get_errno()}"
    found = []
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            fd = libc.syscall(pidfd_getfd, pidfd, int(name), 0)
            if fd < 0:
                continue
            try:
                sock = socket.socket(fileno=fd)
            except OSError:
                os.close(fd)
                continue
            if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
                found.append(sock)
            else:
                sock.close()
    finally:
        os.close(pidfd)
    return found


def test_the_server_sends_a_small_message_at_once(docker_command_server):
    """Nagle's algorithm off on the server's sockets (attnviz.ui.sockets): Streamlit's own
    socket keeps it on, and each small write after a first one waited for the browser's
    delayed ACK (a kept-alive GET answered in ~44 ms instead of ~2). Read from the running
    server: its listening socket and the connection of a kept-alive GET."""
    url, proc, _ = docker_command_server
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        for _ in range(2):  # the second GET on the same connection
            conn.request("GET", "/_stcore/health")
            assert conn.getresponse().read() == b"ok"
        client_port = conn.sock.getsockname()[1]
        socks = _tcp_sockets_of(proc.pid)
        try:
            listening = [s for s in socks if s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)]
            ours = [s for s in socks if not s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
                    and s.getpeername()[1] == client_port]  # fmt: skip
            assert [s.getsockname()[1] for s in listening] == [int(port)]
            assert len(ours) == 1
            for sock in listening + ours:
                assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        finally:
            for sock in socks:
                sock.close()
    finally:
        conn.close()


def test_start_command_rejects_uploads_without_xsrf_token(docker_command_server):
    """XSRF protection is on: an upload without the token (a cross-site form post) is refused
    before any byte reaches the app."""
    url, proc, _ = docker_command_server
    boundary = "attnvizboundary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.csv"\r\n'
        f"Content-Type: text/csv\r\n\r\n1,2\r\n3,4\r\n--{boundary}--\r\n"
    ).encode()
    req = urllib.request.Request(
        url + "/_stcore/upload_file/some-session/some-file",
        data=body,
        method="PUT",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            status = resp.status
    except urllib.error.HTTPError as err:
        status = err.code
    assert status in {400, 403}
    assert _get(url + "/_stcore/health") == (200, b"ok")
    assert proc.poll() is None


# --------------------------------------------------------------------------- unsafe HTML


def _constant_name(node: ast.expr) -> str:
    """``MAX_N`` of ``MAX_N`` or ``style.MAX_N`` (a module's constant), else ""."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _name(func: ast.expr) -> str:
    """A call's function as the app names it: ``intro``, ``ui.intro``, ``page.start``
    (not another module's ``runner.start``)."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and getattr(func.value, "id", "") in ("ui", "page", "i18n"):
        return func.attr
    return ""


def _app_words(node: ast.expr) -> bool:
    """Text that is the app's own: a string literal, ``pointing(literal, literal)`` (the
    device's word for pointing, attnviz.ui.text.pointing), or ``+`` of such."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _app_words(node.left) and _app_words(node.right)
    if isinstance(node, ast.IfExp):  # one of two of the app's own texts
        return _app_words(node.body) and _app_words(node.orelse)
    if isinstance(node, ast.Call) and _name(node.func) == "pointing":
        return all(_app_words(a) for a in node.args)
    if isinstance(node, ast.Call) and _name(node.func) in CATALOG and not node.keywords:
        # a message of attnviz's catalogs: _("literal"), pgettext("ctx", "literal"), ...
        texts = [a for a in node.args if not (_name(node.func) in PLURAL and a is node.args[-1])]
        return bool(texts) and all(
            isinstance(a, ast.Constant) and isinstance(a.value, str) for a in texts
        )
    if (  # _("... {n} ...").format(n=NAMED_CONSTANT or the app's words)
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and not node.args
    ):
        return _app_words(node.func.value) and all(
            _constant_name(k.value).isupper() or _app_words(k.value) for k in node.keywords
        )
    if isinstance(node, ast.JoinedStr):  # an f-string of literals and named constants
        return all(
            isinstance(v, ast.Constant)
            or (isinstance(v, ast.FormattedValue) and _constant_name(v.value).isupper())
            for v in node.values
        )
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        return _name(node.func) in OWN_WORDS  # a function that returns only the app's words
    return False


#: attnviz.i18n's look-ups: their result is a translation of a literal from attnviz's catalogs
CATALOG = {"_", "gettext", "pgettext", "ngettext", "npgettext"}
PLURAL = {"ngettext", "npgettext"}  #: the last argument is the count, not a text

#: Functions of no argument whose every ``return`` gives the app's own words (found by
#: :func:`_own_word_functions`, e.g. ``ui.weights_scale()``).
OWN_WORDS: set[str] = set()


def _own_word_functions(trees) -> set[str]:
    """Names of the app's functions without parameters that return only the app's words."""
    out = set()
    for tree in trees.values():
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            returns = [r for r in ast.walk(fn) if isinstance(r, ast.Return)]
            if (
                not fn.args.args
                and returns
                and all(r.value is not None and _app_words(r.value) for r in returns)
            ):
                out.add(fn.name)
    return out


def _trees():
    return {p: ast.parse(p.read_text(), filename=str(p)) for p in APP_SOURCES if p.exists()}


def _param_sinks(trees) -> dict[str, int]:
    """Functions that pass one of their parameters to raw HTML (``intro(title, text)`` does,
    and ``start`` passes its ``text`` to ``intro``): name -> the parameter's position."""
    sinks: dict[str, int] = {}
    raw_calls = {id(c) for tree in trees.values() for c in _raw_html_calls_of(tree)}
    functions = [n for t in trees.values() for n in ast.walk(t) if isinstance(n, ast.FunctionDef)]
    for _ in range(4):  # a chain of calls, outermost last
        for fn in functions:
            params = [a.arg for a in fn.args.args]
            calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call)]
            for call in calls:
                raw = id(call) in raw_calls
                index = sinks.get(_name(call.func)) if not raw else 0
                args = call.args
                if index is None or index >= len(args):
                    continue
                arg = args[index]
                if isinstance(arg, ast.Name) and arg.id in params:
                    sinks.setdefault(fn.name, params.index(arg.id))
    return sinks


def _raw_html_calls_of(tree):
    """Calls that render raw HTML: any call with a truthy unsafe_allow_html, st.html(...) and
    streamlit.components.v1.html(...)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        is_html = isinstance(node.func, ast.Attribute) and node.func.attr == "html"
        unsafe = any(
            kw.arg == "unsafe_allow_html"
            and not (isinstance(kw.value, ast.Constant) and kw.value.value is False)
            for kw in node.keywords
        )
        if is_html or unsafe:
            yield node


#: Raw HTML this check cannot follow, read by a person: where each text comes from. Lesson
#: files are a teacher's (ATTNVIZ_LESSONS): every text of theirs passes html.escape
#: (tests/ui/test_tour.py shows a "<script>" title written, not run).
REVIEWED = {
    "attnviz/ui/tour.py:_links": "links: html.escape'd labels and URLs (link_html)",
    "attnviz/ui/projector.py:view": "the slides' h1: a message and the store's class code, "
    "html.escape'd",
    "attnviz/ui/tour.py:bar": "the bar's CSS (navlinks.CSS, a literal)",
    "attnviz/ui/tour.py:_summary": "the stops' titles and URLs, html.escape'd",
    "pages/lessons.py:_lesson": "the lesson's links and stop titles, html.escape'd",
    "attnviz/ui/streamlit_private.py:slide_math_css": "CSS with a number (px)",
    "attnviz/ui/streamlit_private.py:hide_box": "CSS of a key checked in HIDDEN_BOXES",
    "pages/learned.py:about_task": "learned.heads_notes(task): the app's own words (pointing)",
    "attnviz/ui/learned_charts.py:heads": "heads_notes(task): the app's own words",
}


def test_raw_html_only_renders_the_apps_own_words():
    """Anything a user typed or uploaded must never reach unsafe_allow_html or st.html: every
    such call takes the app's own words (a literal, ``pointing(...)`` of literals, ``+`` of
    these), directly or through a function's parameter whose every caller passes them."""
    trees = _trees()
    sinks = _param_sinks(trees)
    assert sinks.get("intro") == 1 and sinks.get("start") == 1, sinks
    OWN_WORDS.clear()
    OWN_WORDS.update(_own_word_functions(trees))
    assert "weights_scale" in OWN_WORDS and "_intro" not in OWN_WORDS, OWN_WORDS
    offenders = []
    for path, tree in trees.items():
        params_of, fn_of = {}, {}
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            for call in ast.walk(fn):
                params_of[id(call)] = {a.arg for a in fn.args.args}
                fn_of.setdefault(id(call), fn.name)
        raw_calls = {id(r) for r in _raw_html_calls_of(tree)}  # once per file, not per call
        for call in (c for c in ast.walk(tree) if isinstance(c, ast.Call)):
            raw = id(call) in raw_calls
            index = 0 if raw else sinks.get(_name(call.func))
            if index is None or index >= len(call.args):
                continue
            arg = call.args[index]
            through = isinstance(arg, ast.Name) and arg.id in params_of.get(id(call), ())
            where = f"{path.relative_to(ROOT)}:{fn_of.get(id(call), '<module>')}"
            if not (through or _app_words(arg)) and where not in REVIEWED:
                offenders.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert not offenders, f"raw HTML with text that is not the app's own: {offenders}"


def test_own_words_are_only_functions_returning_literals():
    tree = ast.parse(
        "def a():\n    return 'x' if f else 'y'\n"
        "def b():\n    return name\n"
        "def c(t):\n    return 'x'\n"
    )
    assert _own_word_functions({"m": tree}) == {"a"}
    assert _app_words(ast.parse('f"above {style.MAX_N} tokens"', mode="eval").body)
    assert not _app_words(ast.parse('f"hello {name}"', mode="eval").body)


def test_the_raw_html_check_finds_a_variable():
    tree = ast.parse("import streamlit as st\nst.markdown(user, unsafe_allow_html=True)\n")
    (call,) = _raw_html_calls_of(tree)
    assert not _app_words(call.args[0])
    assert _app_words(ast.parse("'a' + pointing('b', 'c')", mode="eval").body)
    assert not _app_words(ast.parse("'a' + pointing(x, 'c')", mode="eval").body)


# --------------------------------------------------------------------------- image contents


def _requirement_names(path: Path) -> set[str]:
    names = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


def test_the_image_installs_every_package_the_app_imports():
    """The image gets requirements.txt and requirements-model.txt only: every third-party
    module imported by app.py, pages/ and attnviz/ must come from one of those."""
    from importlib.metadata import packages_distributions

    provided = _requirement_names(ROOT / "requirements.txt") | _requirement_names(
        ROOT / "requirements-model.txt"
    )
    dists = packages_distributions()
    missing = {}
    for path in APP_SOURCES:
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            else:
                continue
            for mod in mods:
                top = mod.split(".")[0]
                if top in sys.stdlib_module_names or top in {"attnviz", "__future__"}:
                    continue
                owners = {d.lower().replace("_", "-") for d in dists.get(top, [top])}
                if not owners & provided:
                    missing.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    assert not missing, f"imported but not in the image's requirements: {missing}"


def test_the_largest_x_fits_the_upload_limit(config):
    """X at the largest N x D, written like the app's CSV export (8 significant digits), is
    under maxUploadSize and parses to the same shape."""
    import numpy as np

    from attnviz.teaching import inputs

    x = np.random.default_rng(0).standard_normal((inputs.MAX_TOKENS, inputs.MAX_WIDTH))
    content = "\n".join(",".join(f"{v:.8g}" for v in row) for row in x).encode()
    assert len(content) < config["server"]["maxUploadSize"] * 1_000_000
    parsed = inputs.parse_csv(content, max_cols=inputs.MAX_WIDTH)
    assert parsed.x.shape == x.shape
    np.testing.assert_allclose(parsed.x, x, rtol=1e-7)
