"""The room's link from what Streamlit knows (the pure rules: :mod:`attnviz.classroom.roomlink`).

:func:`link` feeds :func:`attnviz.classroom.roomlink.room_link` the teacher's URL
(``st.context.url``), the address typed in the teacher's view (:data:`GIVEN_KEY`),
``$ATTNVIZ_PUBLIC_URL``, Streamlit's ``server.address`` and ``server.baseUrlPath``, and
whether this server runs in a container. Used by the live class's join link and QR code
(:mod:`attnviz.ui.live`), the presenter view's "Copy link for the class"
(:func:`attnviz.ui.present.link_box`) and a view question's "Open this view on your
device" (:mod:`attnviz.ui.predict`).
"""

from __future__ import annotations

import os

import streamlit as st

from attnviz.classroom import roomlink
from attnviz.classroom.roomlink import RoomLink

#: The teacher's field "Address the room opens" (session state; the live class's view).
GIVEN_KEY = "class_public_url"


def link(page: str | None = None) -> RoomLink:
    """The room's address of this page (``page``: another page of the app, by its path
    under the app's address, e.g. ``"exercises"``)."""
    return roomlink.room_link(
        getattr(st.context, "url", None) or "",
        page=page,
        given=st.session_state.get(GIVEN_KEY),
        env=os.environ.get(roomlink.PUBLIC_URL_ENV),
        listen=st.get_option("server.address"),
        base_path=st.get_option("server.baseUrlPath") or "",
        container=roomlink.in_container(),
        lan=roomlink.lan_address(),
    )


def warn(room: RoomLink) -> None:
    """The link's warning, if any (phones cannot open it: why, and how to fix it)."""
    if room.warning:
        st.warning(room.warning, icon=":material/wifi_off:")
