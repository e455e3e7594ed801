"""The address a lecture room can open: the join link of a live class and the presenter
view's "Copy link for the class" (pure: no Streamlit; ``attnviz.ui.address`` feeds it what
Streamlit knows).

A teacher who runs the app on a laptop opens ``http://localhost:8501``: that address is
every device's own, so a phone that scans it opens nothing. :func:`room_link` decides,
in this order:

1. an address the teacher gives: typed in the teacher's view (``given``), else the
   environment variable :data:`PUBLIC_URL_ENV` (``env``); the app's address as the room
   opens it, with a proxy's base path if there is one (``http://192.168.1.20:8501``,
   ``https://hall.example.org/attnviz``);
2. the page's own address when the teacher did not open it through this computer's
   loopback (``http://192.168.1.20:8501/...``, a proxy's name): the room can open it too;
3. this machine's network address (``lan``) when the server listens beyond this computer
   (``server.address`` unset, ``0.0.0.0``, ``::``, or a network address);
4. otherwise the teacher's own address, with a warning that phones cannot open it and how
   to fix it (``--server.address 0.0.0.0``, or the variable).

Inside a container (:func:`in_container`) the addresses the app sees are the container's
own (a bridge address such as 172.17.0.2), not the laptop's: step 3 never offers them, and
the warning says how to pass the laptop's address (``docker run -e ATTNVIZ_PUBLIC_URL=…``).

Warnings, notes and why an address is refused are in the shown language (the teacher's).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from attnviz.i18n import _

__all__ = [
    "CONTAINER_ENV",
    "PUBLIC_URL_ENV",
    "RoomLink",
    "in_container",
    "lan_address",
    "public_base",
    "room_link",
]

#: The app's address for the room (``http://192.168.1.20:8501``, a proxy's URL).
PUBLIC_URL_ENV = "ATTNVIZ_PUBLIC_URL"
#: ``1``: this server runs in a container; ``0``: it does not (overrides the detection).
CONTAINER_ENV = "ATTNVIZ_CONTAINER"
#: The longest address accepted (a link for a QR code: the code grows with it).
PUBLIC_URL_MAX = 300
#: Addresses that listen on every interface (``server.address``).
WILDCARDS = {"", "0.0.0.0", "::", "[::]"}
EXAMPLE = "http://192.168.1.20:8501"
DOCKER_HINT = f"docker run -e {PUBLIC_URL_ENV}={EXAMPLE} -p 8501:8501 attnviz"
FIND_ADDRESS = (
    "your laptop's address on the room's Wi-Fi: `ip -4 addr` (Linux), `ipconfig getifaddr "
    "en0` (macOS), `ipconfig` (Windows)"
)


@dataclass(frozen=True)
class RoomLink:
    """This page's address for the room (``url``: no query; empty when the page's address
    is not known yet), where it came from (``source``: ``"given"``, ``"env"``, ``"page"``,
    ``"lan"`` or ``"teacher"``), ``warning`` (Markdown: why phones may not open it and how
    to fix it; empty when none) and ``note`` (Markdown: where the address came from)."""

    url: str
    source: str
    warning: str = ""
    note: str = ""


def _is_loopback(host: str) -> bool:
    """``localhost``, 127.0.0.0/8, ::1, and the unspecified 0.0.0.0 / :: (a browser opens
    them as this computer)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def public_base(text: str, what: str = "The address") -> str:
    """``text`` checked as the app's address for the room: ``scheme://host[:port][/path]``
    without a trailing slash. ValueError saying what is wrong otherwise (``what``: the
    address's name in the shown language, default "The address")."""
    what = what if what != "The address" else _("The address")
    raw = text.strip()
    if not raw:
        raise ValueError(_("{what} is empty").format(what=what))
    if len(raw) > PUBLIC_URL_MAX:
        raise ValueError(
            _("{what} is {n} characters long; at most {max}").format(
                what=what, n=len(raw), max=PUBLIC_URL_MAX
            )
        )
    if any(c.isspace() or not c.isprintable() for c in raw):
        raise ValueError(_("{what} holds spaces or control characters").format(what=what))
    if "://" not in raw:
        raise ValueError(
            _("{what} must start with http:// or https:// (e.g. {example})").format(
                what=what, example=EXAMPLE
            )
        )
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise ValueError(
            _("{what} is not a web address ({error}); e.g. {example}").format(
                what=what, error=exc, example=EXAMPLE
            )
        ) from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(
            _("{what} must start with http:// or https://, not {scheme}://").format(
                what=what, scheme=parts.scheme
            )
        )
    if not parts.hostname:
        raise ValueError(
            _("{what} names no computer (e.g. {example})").format(what=what, example=EXAMPLE)
        )
    if parts.username or parts.password:
        raise ValueError(_("{what} must not hold a user name or password").format(what=what))
    if parts.query or parts.fragment:
        raise ValueError(
            _("{what} must end before any ? or #: the app adds the page's own").format(what=what)
        )
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = host + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip("/"), "", ""))


def _page(path: str, base_path: str) -> str:
    """The page's part of a URL path: ``/attnviz/exercises`` under the base path
    ``attnviz`` -> ``exercises``; the main page -> ``""``."""
    page = path.strip("/")
    base = base_path.strip("/")
    if base and (page == base or page.startswith(base + "/")):
        page = page[len(base) :].strip("/")
    return page


def _with_host(parts, host: str) -> str:
    """The page's URL with ``host`` in place of its host (same scheme, port and path)."""
    host = f"[{host}]" if ":" in host else host
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _container_warning(seen: str) -> str:
    return _(
        "**Phones cannot open this link.** This server runs in a container: the addresses "
        "it sees ({seen}) are the container's own, not your laptop's. Start it with your "
        "laptop's address on the room's Wi-Fi, `{docker}`, or type that address below."
    ).format(seen=seen, docker=DOCKER_HINT)


def _loopback_warning(listen: str | None) -> str:
    why = (
        _("this server answers this computer only (`--server.address {listen}`)").format(
            listen=listen
        )
        if listen and not listen.startswith("unix:")
        else _("this server cannot tell the address other devices reach it at")
    )
    return _(
        "**Phones cannot open this link:** `localhost` and `127.0.0.1` mean each device "
        "itself, and {why}. Restart it with `--server.address 0.0.0.0`, or set "
        "`{setting}` (your laptop's address on the room's Wi-Fi), or type "
        "that address below."
    ).format(why=why, setting=f"{PUBLIC_URL_ENV}={EXAMPLE}")


def _given(page: str, values: list[tuple[str, str | None, str]]) -> tuple[RoomLink | None, list]:
    """The first valid address of ``values`` ((source, text, label)), and the problems of
    the invalid ones."""
    problems = []
    for source, text, label in values:
        if text is None or not text.strip():
            continue
        try:
            base = public_base(text, label)
        except ValueError as exc:
            problems.append(_("{problem}: not used.").format(problem=exc))
            continue
        url = f"{base}/{page}"
        warning = ""
        if _is_loopback(urlsplit(base).hostname or ""):
            warning = _(
                "**Phones cannot open this link:** {label} ({base}) is this computer's own "
                "address. Give its address on the room's network instead."
            ).format(label=label, base=base)
        note = _("The link uses {label}: {base}.").format(label=label, base=base)
        return RoomLink(url, source, warning, note), problems
    return None, problems


def room_link(
    teacher_url: str,
    *,
    page: str | None = None,
    given: str | None = None,
    env: str | None = None,
    listen: str | None = None,
    base_path: str = "",
    container: bool = False,
    lan: str | None = None,
) -> RoomLink:
    """The room's address of the page the teacher sees at ``teacher_url`` (its query is
    dropped): see the module docstring for the order. ``page``: the page's path under the
    app's address (``"exercises"``; default: read from ``teacher_url``, which the browser
    may not have told yet). ``given``: typed in the teacher's
    view; ``env``: :data:`PUBLIC_URL_ENV`; ``listen``: Streamlit's ``server.address``;
    ``base_path``: ``server.baseUrlPath``; ``container``: :func:`in_container`; ``lan``:
    :func:`lan_address`. An invalid ``given`` or ``env`` is skipped, and said in the
    warning."""
    parts = urlsplit(teacher_url.strip())
    if page is None:
        page = _page(parts.path, base_path)
    else:  # another page than the teacher's: its path under the same base path
        page = page.strip("/")
        base = base_path.strip("/")
        parts = parts._replace(path="/" + "/".join(p for p in (base, page) if p))
    values = [("given", given, _("the address you typed")), ("env", env, PUBLIC_URL_ENV)]
    found, problems = _given(page, values)
    link = found or _own_link(parts, listen, container, lan)
    warning = " ".join([*problems, link.warning]).strip()
    return RoomLink(link.url, link.source, warning, link.note)


def _own_link(parts, listen: str | None, container: bool, lan: str | None) -> RoomLink:
    """Steps 2 to 4 of the module docstring (no address given)."""
    own = urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")) if parts.netloc else ""
    host = parts.hostname or ""
    if not own:  # the browser has not told the page its address (yet)
        return RoomLink("", "teacher")
    if not _is_loopback(host):
        if container and lan and host == lan:  # the container's own bridge address
            return RoomLink(own, "teacher", _container_warning(host))
        return RoomLink(own, "page")
    if container:
        return RoomLink(own, "teacher", _container_warning(lan or _("172.17.0.2, for example")))
    address = (listen or "").strip()
    if address.startswith("unix:") or (address not in WILDCARDS and _is_loopback(address)):
        return RoomLink(own, "teacher", _loopback_warning(address))
    ip = address if address not in WILDCARDS else lan
    if not ip or _is_loopback(ip):
        return RoomLink(
            own,
            "teacher",
            _(
                "**Phones cannot open this link:** `localhost` means each device itself, and "
                "this computer's network address was not found (is it on a network?). "
                "Connect it to the room's Wi-Fi and reload, or type its address below."
            ),
        )
    note = _(
        "The link uses this computer's network address ({ip}): phones must be on the same "
        "network, and a firewall must let them reach the port. If they cannot open it, "
        "type the address the room should use below."
    ).format(ip=ip)
    return RoomLink(_with_host(parts, ip), "lan", "", note)


def in_container(
    environ: Mapping[str, str] | None = None,
    exists: Callable[[str], bool] = os.path.exists,
    read: Callable[[str], str] | None = None,
) -> bool:
    """Whether this process runs in a container: :data:`CONTAINER_ENV` (``1``/``0``)
    decides if set (the project's Dockerfile sets 1); else the ``container`` variable
    (podman, systemd-nspawn), Docker's ``/.dockerenv``, podman's ``/run/.containerenv``,
    or a container runtime in ``/proc/1/cgroup``."""
    environ = os.environ if environ is None else environ
    forced = environ.get(CONTAINER_ENV, "").strip().lower()
    if forced in ("1", "true", "yes", "on"):
        return True
    if forced in ("0", "false", "no", "off"):
        return False
    if environ.get("container"):
        return True
    if exists("/.dockerenv") or exists("/run/.containerenv"):
        return True
    read = read or _read_text
    cgroup = read("/proc/1/cgroup")
    return any(word in cgroup for word in ("docker", "kubepods", "containerd", "libpod", "lxc"))


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")[:10_000]
    except OSError:
        return ""


def lan_address() -> str | None:
    """This machine's IPv4 address on its network (the interface of its default route),
    None if there is none (no network) or only a loopback. No packet is sent: connecting
    a UDP socket only chooses the route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere real
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if _is_loopback(ip) else ip
