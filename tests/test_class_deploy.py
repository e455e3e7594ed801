"""A live class in deployment: the replicas of deploy/compose.yaml (one service, scaled) share
a PostgreSQL service (official image, named volume, health check); the image alone keeps its
classes in SQLite under /data (a writable volume)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from sqlalchemy.engine import make_url

from attnviz import classroom

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def services() -> dict:
    return yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())["services"]


def test_compose_has_a_postgres_service_with_a_volume_and_a_health_check(services):
    pg = services["postgres"]
    assert re.fullmatch(r"postgres:\d+", pg["image"])  # the official image, a major version
    volume, path = pg["volumes"][0].split(":")[:2]
    assert path == "/var/lib/postgresql/data" and "/" not in volume  # a named volume
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    assert volume in compose["volumes"]
    assert "pg_isready" in " ".join(pg["healthcheck"]["test"])
    assert "${ATTNVIZ_DB_PASSWORD:?" in pg["environment"]["POSTGRES_PASSWORD"]


def test_every_replica_gets_the_postgres_url_and_waits_for_it(services):
    pg = services["postgres"]["environment"]
    replicas = services["attnviz"]  # one service, scaled (deploy.replicas, --scale)
    assert replicas["deploy"]["replicas"] == 3
    raw = replicas["environment"][classroom.DATABASE_URL_ENV]
    url = make_url(raw.replace("${ATTNVIZ_DB_PASSWORD:?", "").split("}")[0] + raw[
        raw.index("}") + 1 :])  # fmt: skip
    assert url.drivername == "postgresql+psycopg"
    assert (url.username, url.host, url.port, url.database) == (
        pg["POSTGRES_USER"], "postgres", 5432, pg["POSTGRES_DB"],
    )  # fmt: skip
    assert replicas["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_the_image_alone_keeps_classes_in_a_writable_data_volume():
    text = (ROOT / "Dockerfile").read_text()
    assert 'VOLUME ["/data"]' in text
    assert re.search(r"ATTNVIZ_DATA_DIR=/data\b", text)
    assert "mkdir -p /data && chown 10001:10001 /data" in text
    assert text.index("chown 10001:10001 /data") < text.index("USER 10001:10001")
    assert classroom.DATA_DIR_ENV == "ATTNVIZ_DATA_DIR"
