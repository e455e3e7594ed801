"""The room's link (attnviz.classroom.roomlink): which address a live class's join link and QR code,
and the presenter's "Copy link for the class", give the room, and when the teacher is
warned that phones cannot open it (issue 25, item 1)."""

from __future__ import annotations

import ipaddress

import pytest

from attnviz.classroom import roomlink
from attnviz.classroom.roomlink import PUBLIC_URL_ENV, in_container, public_base, room_link

LOCAL = "http://localhost:8501/exercises"
LAN = "192.168.1.20"


def test_the_variable_is_the_rooms_address_of_this_page():
    link = room_link(LOCAL, env="http://192.168.1.20:8501/", listen="127.0.0.1")
    assert (link.url, link.source, link.warning) == (
        "http://192.168.1.20:8501/exercises",
        "env",
        "",
    )
    assert PUBLIC_URL_ENV in link.note


def test_a_proxys_url_under_a_base_path():
    # the server itself under the base path attnviz, the proxy passes it through
    link = room_link(
        "http://localhost:8501/attnviz/masking",
        env="https://hall.example.org/attnviz",
        base_path="/attnviz/",
    )
    assert link.url == "https://hall.example.org/attnviz/masking"
    # the main page has no page path
    main = room_link(
        "http://localhost:8501/attnviz/", env="https://h.example.org/x", base_path="attnviz"
    )
    assert main.url == "https://h.example.org/x/"


def test_the_typed_address_wins_over_the_variable():
    link = room_link(LOCAL, given="http://10.0.0.7:8501", env="http://192.168.1.20:8501")
    assert (link.url, link.source) == ("http://10.0.0.7:8501/exercises", "given")


def test_an_invalid_typed_address_is_said_and_the_next_one_used():
    link = room_link(LOCAL, given="10.0.0.7:8501", env="http://192.168.1.20:8501")
    assert link.url == "http://192.168.1.20:8501/exercises"
    assert "must start with http:// or https://" in link.warning and "not used" in link.warning


def test_a_server_only_this_computer_reaches_warns_and_says_how_to_fix_it():
    link = room_link(LOCAL, listen="127.0.0.1", lan=LAN)
    assert link.url == LOCAL and link.source == "teacher"
    assert "Phones cannot open this link" in link.warning
    assert "--server.address 0.0.0.0" in link.warning and PUBLIC_URL_ENV in link.warning
    assert LAN not in link.url  # the LAN address would not answer: the server listens on loopback


@pytest.mark.parametrize("listen", [None, "", "0.0.0.0", "::"])
def test_a_server_that_listens_beyond_this_computer_gives_its_network_address(listen):
    link = room_link(LOCAL, listen=listen, lan=LAN)
    assert (link.url, link.source, link.warning) == (f"http://{LAN}:8501/exercises", "lan", "")
    assert LAN in link.note and "same network" in link.note


def test_a_server_bound_to_one_network_address_gives_that_address():
    link = room_link("http://127.0.0.1:8600/", listen="10.1.2.3", lan=LAN)
    assert link.url == "http://10.1.2.3:8600/"


def test_no_network_address_found_warns():
    link = room_link(LOCAL, listen="0.0.0.0", lan=None)
    assert link.url == LOCAL and "network address was not found" in link.warning


def test_in_a_container_its_own_addresses_are_never_the_rooms():
    link = room_link(LOCAL, listen="0.0.0.0", container=True, lan="172.17.0.2")
    assert link.url == LOCAL and "172.17.0.2" not in link.url
    assert "container" in link.warning
    assert f"docker run -e {PUBLIC_URL_ENV}=" in link.warning and "-p 8501:8501" in link.warning
    # the teacher who opened the container's bridge address directly is warned too
    bridge = room_link("http://172.17.0.2:8501/exercises", container=True, lan="172.17.0.2")
    assert "container" in bridge.warning
    # with the variable the container's link is the laptop's
    ok = room_link(LOCAL, env="http://192.168.1.20:8501", container=True, lan="172.17.0.2")
    assert (ok.url, ok.warning) == ("http://192.168.1.20:8501/exercises", "")


def test_a_page_opened_through_the_network_or_a_proxy_is_the_rooms_address():
    for url in ("http://192.168.1.20:8501/exercises", "https://hall.example.org/attnviz/exercises"):
        link = room_link(url + "?class=K7QX2M&teacher=secret", listen="127.0.0.1")
        assert (link.url, link.source, link.warning) == (url, "page", "")


def test_a_loopback_address_given_is_warned_about():
    link = room_link(LOCAL, env="http://127.0.0.1:8501")
    assert link.url == "http://127.0.0.1:8501/exercises" and "own" in link.warning


def test_the_page_can_be_named_when_the_browser_has_not_told_its_address():
    assert room_link("", page="exercises", env="http://h.example.org/").url == (
        "http://h.example.org/exercises"
    )
    assert room_link("", page="exercises") == roomlink.RoomLink("", "teacher")


def test_an_ipv6_network_address_is_bracketed():
    link = room_link("http://[::1]:8501/exercises", lan="fd00::20")
    assert link.url == "http://[fd00::20]:8501/exercises"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("192.168.1.20:8501", "must start with http://"),
        ("ftp://192.168.1.20", "must start with http:// or https://"),
        ("http://", "names no computer"),
        ("http://u:p@192.168.1.20", "user name or password"),
        ("http://192.168.1.20:8501/?x=1", "before any ?"),
        ("http://192.168.1.20:99999", "not a web address"),
        ("http://192.168.1.20 :8501", "spaces"),
        ("http://\u202e192.168.1.20", "control characters"),
        ("http://h.example.org/" + "a" * 400, "at most 300"),
    ],
)
def test_public_base_refuses_what_is_not_an_address_and_says_why(text, why):
    with pytest.raises(ValueError, match=why.replace("?", r"\?").replace("/", "/")):
        public_base(text)


def test_public_base_normalises():
    assert public_base(" HTTP://Hall.Example.org:8080/attnviz/ ") == (
        "http://hall.example.org:8080/attnviz"
    )


def test_in_container_from_the_variable_files_and_cgroups():
    nothing = {"exists": lambda p: False, "read": lambda p: "0::/\n"}
    assert in_container({}, **nothing) is False
    assert in_container({"ATTNVIZ_CONTAINER": "1"}, **nothing) is True
    assert in_container({"container": "podman"}, **nothing) is True
    assert in_container({}, exists=lambda p: p == "/.dockerenv", read=nothing["read"]) is True
    assert in_container({}, exists=lambda p: p == "/run/.containerenv", read=nothing["read"])
    assert in_container({}, exists=nothing["exists"], read=lambda p: "1:name=systemd:/docker/ab")
    # the variable wins over every sign (a test server in a container, say)
    assert (
        in_container({"ATTNVIZ_CONTAINER": "0"}, exists=lambda p: True, read=lambda p: "docker")
        is False
    )


def test_lan_address_is_a_network_ipv4_address_or_none():
    ip = roomlink.lan_address()
    assert ip is None or (
        ipaddress.ip_address(ip).version == 4 and not ipaddress.ip_address(ip).is_loopback
    )


def test_another_page_gets_its_own_path_on_the_teachers_address():
    """The join link names the class's student page, not the teacher's (Exercises) page,
    also when the link is the teacher's own address, and under a base path."""
    own = roomlink.room_link("http://10.1.2.3:8501/exercises?class=X", page="join")
    assert own.url == "http://10.1.2.3:8501/join"
    based = roomlink.room_link(
        "http://10.1.2.3:8501/attnviz/exercises", page="join", base_path="attnviz"
    )
    assert based.url == "http://10.1.2.3:8501/attnviz/join"
