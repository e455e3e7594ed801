"""attnviz.ui.sockets: TCP_NODELAY on the listening sockets, inherited by each connection."""

import asyncio
import contextlib
import socket

from attnviz.ui import sockets


def _nodelay(sock: socket.socket) -> int:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_a_listening_socket_made_as_streamlit_makes_it_passes_no_delay_to_its_connections():
    # Streamlit's own bind: socket.socket(family=...), protocol 0, so asyncio leaves Nagle on
    with socket.socket(family=socket.AF_INET) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with socket.create_connection(listener.getsockname()):
            accepted, _ = listener.accept()
            with accepted:
                assert listener.proto == 0 and _nodelay(accepted) == 0
        assert sockets.no_delay() >= 1
        assert _nodelay(listener) == 1
        with socket.create_connection(listener.getsockname()) as client:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
            accepted, _ = listener.accept()
            with accepted:
                assert _nodelay(accepted) == 1
            # a socket that is not listening (a client's) is left as it was
            sockets.no_delay()
            assert _nodelay(client) == 0


def test_no_delay_keeps_the_servers_socket_object_and_its_descriptor():
    with socket.socket(family=socket.AF_INET) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        fd = listener.fileno()
        sockets.no_delay()
        assert listener.fileno() == fd and listener.getsockname()[1] > 0


def test_the_lifespan_sets_no_delay_then_enters_the_next_span():
    seen = []

    @contextlib.asynccontextmanager
    async def then(app):
        seen.append(("enter", app))
        yield
        seen.append(("exit", app))

    async def run():
        with socket.socket(family=socket.AF_INET) as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            async with sockets.lifespan(then)("app"):
                seen.append(("nodelay", _nodelay(listener)))

    asyncio.run(run())
    assert seen == [("enter", "app"), ("nodelay", 1), ("exit", "app")]
