"""The server sends a small message at once: ``TCP_NODELAY`` on its listening sockets.

Streamlit binds its listening socket itself (``socket.socket(family=...)``, protocol 0),
and asyncio turns Nagle's algorithm off only on a connection whose socket says
``IPPROTO_TCP``: every connection Streamlit accepts kept it on. A small write that follows
one not yet acknowledged then waits for the browser's delayed ACK (40 ms on Linux, up to
200 ms on Windows): a rerun's first websocket message went out at once and the rest in one
burst 40 ms later; a GET on a kept-alive connection took ~44 ms (docs/benchmarks.md,
"Nagle's 40 ms"). Linux, the BSDs and macOS give an accepted socket its listening
socket's ``TCP_NODELAY``: set once at startup on the listening sockets, it holds for every
connection after.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from collections.abc import AsyncIterator, Callable
from typing import Any

#: Where a process finds its open file descriptors (Linux; macOS and the BSDs).
FD_DIRS = ("/proc/self/fd", "/dev/fd")


def _socket_fds() -> list[int]:
    """This process's open sockets' file descriptors ([] without a descriptor folder)."""
    folder = next((d for d in FD_DIRS if os.path.isdir(d)), None)
    fds = []
    for name in os.listdir(folder) if folder else ():
        with contextlib.suppress(OSError, ValueError):
            if stat.S_ISSOCK(os.fstat(int(name)).st_mode):
                fds.append(int(name))
    return fds


def no_delay() -> int:
    """``TCP_NODELAY`` on each listening TCP socket of this process; how many were set.
    Each is read through a duplicate of its descriptor (closed after): the server's own
    socket object is not touched, and a socket that is not listening is left as it is."""
    count = 0
    for fd in _socket_fds():
        with contextlib.suppress(OSError):
            dup = os.dup(fd)
            try:
                sock = socket.socket(fileno=dup)
            except OSError:  # not a socket Python can take: the duplicate is still ours
                os.close(dup)
                raise
            with sock:
                tcp = sock.family in (socket.AF_INET, socket.AF_INET6)
                tcp = tcp and sock.type == socket.SOCK_STREAM
                if tcp and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    count += 1
    return count


def lifespan(then: Callable[[Any], contextlib.AbstractAsyncContextManager]) -> Callable:
    """For ``st.App(..., lifespan=...)``: :func:`no_delay` when the server starts (its
    socket is bound and listening, no connection accepted yet), then ``then``'s span."""

    @contextlib.asynccontextmanager
    async def span(app: Any) -> AsyncIterator[None]:
        no_delay()
        async with then(app):
            yield

    return span
