"""The join link and QR code a room can open (issue 25, item 1), in a real browser.

- A server only this computer reaches (``--server.address 127.0.0.1``, as a laptop run
  with that flag) and nothing set: the teacher's join box warns that phones cannot open
  the ``127.0.0.1`` link and says how to fix it; an address typed in the box's field
  replaces the link and its QR code, and the warning goes.
- ``ATTNVIZ_PUBLIC_URL`` set: the join link, its QR code and the presenter view's "Copy
  link for the class" use it.
- A server that listens on every interface (``--server.address 0.0.0.0``), opened by the
  teacher at ``127.0.0.1``: the join link uses this machine's network address, and a
  student's browser opens that link and joins.

Each test its own server (``ATTNVIZ_CONTAINER=0``: this machine's container signs must
not decide the case under test), its own SQLite class store.
"""

from __future__ import annotations

import base64
import re

import pytest
from class_helpers import Phone, start_class
from e2e_app import BrowserSession, start_app_server, stop_app_server

from attnviz import classroom
from attnviz.classroom import roomlink
from attnviz.ui.present import qr_svg

pytestmark = pytest.mark.e2e

PUBLIC = "http://192.168.1.20:8501"
TYPED = "http://10.20.30.40:8600"


@pytest.fixture
def serve(tmp_path):
    """Start a server with ``extra_env`` and ``address`` (``server.address``); stopped and
    its log checked at the end."""
    started = []

    def start(extra_env=None, address="127.0.0.1"):
        env = {classroom.DATA_DIR_ENV: str(tmp_path), roomlink.CONTAINER_ENV: "0"}
        env.update(extra_env or {})
        server = start_app_server(extra_args=["--server.address", address], extra_env=env)
        started.append(server)
        return server

    yield start
    for server in started:
        stop_app_server(server)
        out = server.output()
        server.log_path.unlink(missing_ok=True)
        assert "Traceback (most recent call last)" not in out, out


def join_box(s: BrowserSession) -> tuple[str, str, str]:
    """The join box's link (its code box), its QR code's SVG path and its whole text."""
    box = s.page.locator(".st-key-class_join")
    link = box.locator('[data-testid="stCode"]').inner_text().strip()
    return link, qr_path_of(box.locator("img").get_attribute("src")), box.inner_text()


def qr_path_of(src: str | None) -> str:
    """The modules of a QR code: the path data of its SVG (a data URL, or segno's text)."""
    assert src
    svg = base64.b64decode(src.split(",", 1)[1]).decode() if src.startswith("data:") else src
    paths = re.findall(r'\sd="([^"]+)"', svg)
    assert len(paths) == 1, svg[:300]
    return paths[0]


def test_a_loopback_server_warns_and_takes_a_typed_address(browser, serve):
    server = serve()
    teacher = BrowserSession(browser, server)
    try:
        code, _ = start_class(teacher, 3)
        link, qr, text = join_box(teacher)
        assert link == f"{server.url}/join?class={code}"  # 127.0.0.1: the teacher's own
        assert qr == qr_path_of(qr_svg(link))
        assert "Phones cannot open this link" in text
        assert "--server.address 0.0.0.0" in text and roomlink.PUBLIC_URL_ENV in text
        teacher.screenshot("class_join_warning_1280x800", full=False)
        field = teacher.page.locator(".st-key-class_public_url input")
        field.fill(TYPED + "/")
        teacher.rerun_after(lambda: field.press("Enter"))
        link, qr, text = join_box(teacher)
        assert link == f"{TYPED}/join?class={code}"
        assert qr == qr_path_of(qr_svg(link))
        assert "Phones cannot open" not in text and "the address you typed" in text
        field.fill("10.20.30.40:8600")  # no http://: said, and not used
        teacher.rerun_after(lambda: field.press("Enter"))
        link, _, text = join_box(teacher)
        assert link.startswith(server.url) and "must start with http:// or https://" in text
        teacher.assert_healthy("the join box")
    finally:
        teacher.close()


def test_the_variable_sets_the_join_link_its_qr_code_and_the_presenter_link(browser, serve):
    server = serve({roomlink.PUBLIC_URL_ENV: PUBLIC})
    teacher = BrowserSession(browser, server)
    try:
        code, key = start_class(teacher, 3)
        link, qr, text = join_box(teacher)
        assert link == f"{PUBLIC}/join?class={code}"
        assert qr == qr_path_of(qr_svg(link))
        assert "Phones cannot open" not in text
        # the presenter view's "Copy link for the class" gives the room the same address
        teacher.open(f"/multi_head?present=1&N=4&D=4&heads=2&class={code}&teacher={key}")
        press_text(teacher, "Copy link for the class")
        # the popover's code box (it opens over the slide: tests/e2e/test_devices_e2e.py)
        shown = teacher.page.locator('[data-testid="stCode"]').filter(has_text="/multi_head?")
        shown = shown.first
        copied = shown.inner_text().strip()
        assert copied.startswith(f"{PUBLIC}/multi_head?") and f"class={code}" in copied
        assert key not in copied and "present=" not in copied
        teacher.assert_healthy("the presenter link")
    finally:
        teacher.close()


def press_text(s: BrowserSession, text: str) -> None:
    s.page.get_by_text(text).first.click()


def test_a_server_on_the_network_gives_its_address_and_a_student_joins_with_it(browser, serve):
    ip = roomlink.lan_address()
    if ip is None:
        pytest.skip("this machine has no network address")
    server = serve(address="0.0.0.0")
    teacher = BrowserSession(browser, server)
    student = Phone(browser, server)
    try:
        code, _ = start_class(teacher, 3)
        port = server.url.rsplit(":", 1)[1]
        link, qr, text = join_box(teacher)
        assert link == f"http://{ip}:{port}/join?class={code}"
        assert qr == qr_path_of(qr_svg(link)) and ip in text and "Phones cannot" not in text
        student.open(link)  # the room's link, not the teacher's 127.0.0.1
        student.page.get_by_role("heading", name=f"Live class {code}").wait_for()
        assert not student.errors, student.errors
        teacher.assert_healthy("a student on the network address")
    finally:
        teacher.close()
        student.close()
