"""attnviz.classroom, the live class's store: every case that reaches the database runs
against SQLite (a file in a temp dir) and a real PostgreSQL (a throwaway cluster from
Debian's ``postgresql`` package, bench/hall.py). The input checks that refuse a value
before any statement is built (a bad seed or count, a hostile answer, student, nickname or
item) are one code path for both: their cases run on SQLite, and one case of each on both
(``test_each_check_refuses_on_each_database``). A missing PostgreSQL fails these tests, it
does not skip them (``.ci/run`` and ``scripts/test.sh`` install it).

Cases: create, submit, replace, tally, reveal, close, expire, wrong key, schema version,
concurrent submits from threads and from processes, hostile input (SQL fragments, 10 kB
strings, NUL and control characters, Unicode look-alikes) and bound parameters.
"""

from __future__ import annotations

import itertools
import multiprocessing
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa

from attnviz import classroom
from attnviz.classroom import exercises
from attnviz.classroom import schema as classroom_schema
from attnviz.classroom.schema import ClassClosed, ClassNotFound
from attnviz.classroom.store import ClassStore
from tests.classroom import store_worker

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from hall import INSTALL_HINT, PgCluster, pg_bindir  # noqa: E402

SEED, COUNT = 12, 8
ITEMS = exercises.generate(seed=SEED, count=COUNT)


@pytest.fixture(scope="session")
def pg():
    if pg_bindir() is None:
        pytest.fail(f"PostgreSQL is not installed: {INSTALL_HINT}", False)
    cluster = PgCluster(durable=False).start()
    yield cluster
    cluster.stop()


_databases = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    """A fresh, empty database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'classes.db'}"
    cluster = request.getfixturevalue("pg")
    name = f"t{next(_databases)}"
    admin = sa.create_engine(cluster.url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return cluster.url.rsplit("/", 1)[0] + "/" + name


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(url):
    s = ClassStore(url, grade=exercises.grade)
    yield s
    s.dispose()


@pytest.fixture
def sqlite_store(tmp_path):
    """A store on SQLite alone: for the input checks, which run before any statement."""
    s = ClassStore(f"sqlite:///{tmp_path / 'classes.db'}", grade=exercises.grade)
    yield s
    s.dispose()


def wrong(e: exercises.Exercise) -> str:
    """A wrong answer of the question's own kind."""
    if e.choices:
        return next(c for c in e.choices if c != e.answer)
    if e.kind in exercises.SHAPE_KINDS:
        return "(99, 99)"
    return str(e.answer + 7) if isinstance(e.answer, int) else f"{e.answer + 0.5:.2f}"


# --------------------------------------------------------------------------- create


def test_create_gives_a_short_unambiguous_code_and_a_128_bit_key(store):
    codes = set()
    for _ in range(20):
        code, key = store.create(SEED, COUNT)
        assert len(code) == 6 and set(code) <= set(classroom.CODE_ALPHABET)
        assert not set(code) & set("0O1IL")
        assert len(key) >= 22  # 16 random bytes, URL-safe base64
        codes.add(code)
    assert len(codes) == 20
    info = store.info(code.lower())  # typed in lower case: the same class
    assert (info.code, info.seed, info.count, info.closed, info.revealed) == (
        code, SEED, COUNT, False, frozenset(),
    )  # fmt: skip


@pytest.mark.parametrize(
    "seed, count", [(-1, 8), (2**32, 8), ("12", 8), (True, 8), (1, 0), (1, 51), (1, 2.0)]
)
def test_create_refuses_a_bad_seed_or_count(sqlite_store, seed, count):
    with pytest.raises(ValueError, match="seed|count"):
        sqlite_store.create(seed, count)


def test_the_teacher_key_is_not_stored(store, url):
    code, key = store.create(SEED, COUNT)
    with store.engine.connect() as conn:
        row = conn.execute(sa.select(classroom.classes_table)).one()
    assert key not in tuple(str(v) for v in row)


# --------------------------------------------------------------------------- submit, tally


def test_submit_checks_and_the_tally_counts(store):
    code, key = store.create(SEED, COUNT)
    assert store.submit(code, "s1", 0, ITEMS[0].answer_text) is True
    assert store.submit(code, "s2", 0, f" {ITEMS[0].answer_text} ") is True
    assert store.submit(code, "s3", 0, wrong(ITEMS[0])) is False
    assert store.submit(code, "s4", 0, wrong(ITEMS[0])) is False
    assert store.submit(code, "s5", 0, "abc") is False
    assert store.submit(code, "s1", 1, ITEMS[1].answer_text, nickname="Ada") is True
    t = store.tally(code, key)
    assert sorted(t) == list(range(COUNT))
    assert t[0] == {
        "answered": 5,
        "right": 2,
        "wrong": 3,
        "wrong_answers": [(wrong(ITEMS[0]), 2), ("abc", 1)],
    }
    assert t[1]["answered"] == 1 and t[1]["right"] == 1
    assert all(t[i]["answered"] == 0 for i in range(2, COUNT))
    assert store.students(code, key) == 5
    assert store.answers(code, "s1") == {0: (ITEMS[0].answer_text, True), 1: (
        ITEMS[1].answer_text, True)}  # fmt: skip


def test_a_later_answer_replaces_the_earlier_one(store):
    code, key = store.create(SEED, COUNT)
    assert store.submit(code, "s1", 2, wrong(ITEMS[2])) is False
    assert store.submit(code, "s1", 2, ITEMS[2].answer_text) is True
    t = store.tally(code, key)[2]
    assert (t["answered"], t["right"], t["wrong"], t["wrong_answers"]) == (1, 1, 0, [])
    assert store.count_rows(code) == 1
    store.submit(code, "s1", 2, "junk")  # and back to wrong
    assert store.tally(code, key)[2]["wrong_answers"] == [("junk", 1)]


def test_classes_are_separate(store):
    a, ka = store.create(SEED, COUNT)
    b, kb = store.create(SEED + 1, 3)
    store.submit(a, "s1", 0, "1")
    assert store.tally(b, kb)[0]["answered"] == 0 and len(store.tally(b, kb)) == 3
    with pytest.raises(PermissionError):
        store.tally(b, ka)  # one class's key opens no other


# --------------------------------------------------------------------------- teacher


def test_reveal_marks_the_item_once_and_checks_the_range(store):
    code, key = store.create(SEED, COUNT)
    store.reveal(code, key, 3)
    store.reveal(code, key, 3)
    store.reveal(code, key, 0)
    assert store.info(code).revealed == frozenset({0, 3})
    for bad in (-1, COUNT, True, "1", 1.0):
        with pytest.raises(ValueError, match="item"):
            store.reveal(code, key, bad)


def test_close_ends_the_answers_but_keeps_the_tally(store):
    code, key = store.create(SEED, COUNT)
    store.submit(code, "s1", 0, "1")
    store.close(code, key)
    assert store.info(code).closed
    with pytest.raises(ClassClosed, match="ended"):
        store.submit(code, "s2", 0, "1")
    assert store.tally(code, key)[0]["answered"] == 1
    assert store.count_rows(code) == 1


@pytest.mark.parametrize("bad", ["", "x" * 22, None, 42, "A" * 10_000])
def test_a_wrong_key_is_refused_everywhere(store, bad):
    code, key = store.create(SEED, COUNT)
    for call in (store.tally, store.close, store.students):
        with pytest.raises(PermissionError, match="wrong teacher key"):
            call(code, bad)
    with pytest.raises(PermissionError):
        store.reveal(code, bad, 0)
    assert not store.authorised(code, bad) and store.authorised(code, key)
    assert not store.info(code).closed and not store.info(code).revealed


def test_teaches_is_one_read_that_says_whether_the_key_runs_an_open_class(store):
    """The presenter's pages ask on every run whether their teacher's class is open
    (attnviz.ui.predict.teacher): one statement, not a key check and then the whole class."""
    code, key = store.create(SEED, COUNT)
    statements = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    assert store.teaches(code, key) and len(statements) == 1
    assert not store.teaches(code, "x" * 22) and not store.teaches(code, None)
    store.close(code, key)
    statements.clear()
    assert not store.teaches(code, key) and len(statements) == 1
    with pytest.raises(ClassNotFound):
        store.teaches("ZZZZZZ", key)


def test_classes_expire_after_24_hours_with_their_answers(url):
    clock = Clock()
    store = ClassStore(url, clock=clock, grade=exercises.grade)
    code, key = store.create(SEED, COUNT)
    store.submit(code, "s1", 0, "1")
    store.reveal(code, key, 0)
    clock.now += 24 * 3600 - 1
    assert store.tally(code, key)[0]["answered"] == 1  # still there
    clock.now += 1
    for call in (lambda: store.info(code), lambda: store.submit(code, "s2", 0, "1")):
        with pytest.raises(ClassNotFound, match="expired"):
            call()
    with pytest.raises(ClassNotFound):
        store.tally(code, key)
    store.create(SEED, COUNT)  # purges
    with store.engine.connect() as conn:
        for table in (classroom.answers_table, classroom.reveals_table):
            n = conn.execute(sa.select(sa.func.count()).where(table.c.code == code)).scalar()
            assert n == 0, table.name
        assert conn.execute(sa.select(sa.func.count(classroom.classes_table.c.code))).scalar() == 1
    store.dispose()


def test_the_schema_version_is_recorded_and_another_refused(url):
    ClassStore(url, grade=exercises.grade).dispose()
    ClassStore(url, grade=exercises.grade).dispose()  # a second store on the same tables: fine
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        v = conn.execute(sa.select(classroom.meta_table.c.value)).scalar_one()
        assert v == str(classroom.SCHEMA_VERSION)
        conn.execute(classroom.meta_table.update().values(value="99"))
    engine.dispose()
    with pytest.raises(RuntimeError, match="schema version 99.*expects 1"):
        ClassStore(url, grade=exercises.grade)


def test_the_default_url_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(classroom.DATABASE_URL_ENV, raising=False)
    monkeypatch.setenv(classroom.DATA_DIR_ENV, str(tmp_path / "data"))
    assert classroom.default_url() == f"sqlite:///{tmp_path / 'data' / 'classes.db'}"
    assert (tmp_path / "data").is_dir()
    monkeypatch.setenv(classroom.DATABASE_URL_ENV, "postgresql+psycopg://u@h/db")
    assert classroom.default_url() == "postgresql+psycopg://u@h/db"
    monkeypatch.delenv(classroom.DATA_DIR_ENV)
    monkeypatch.delenv(classroom.DATABASE_URL_ENV)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert classroom.default_url().endswith("/.local/share/attnviz/classes.db")


# --------------------------------------------------------------------------- concurrency


def test_concurrent_submits_from_threads_lose_nothing(store):
    code, key = store.create(SEED, COUNT)
    students, per = 16, COUNT

    def one(s: int) -> int:
        acked = 0
        for item in range(per):
            store.submit(code, f"t{s}", item, wrong(ITEMS[item]))  # then replaced:
            acked += store.submit(code, f"t{s}", item, ITEMS[item].answer_text) is True
        return acked

    with ThreadPoolExecutor(8) as pool:
        acked = sum(pool.map(one, range(students)))
    assert acked == students * per
    assert store.count_rows(code) == students * per
    t = store.tally(code, key)
    assert all(t[i]["answered"] == t[i]["right"] == students for i in range(COUNT))


def test_concurrent_submits_from_processes_lose_nothing(store, url):
    code, key = store.create(SEED, COUNT)
    workers, per = 4, 5
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: no inherited pool
    with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        answers = [ITEMS[item].answer_text for item in range(COUNT)]
        futures = [
            pool.submit(store_worker.submit_all, url, code, w, per, answers) for w in range(workers)
        ]
        acked = sum(f.result(timeout=240) for f in futures)
    # meanwhile, this process writes too
    assert acked == workers * per * COUNT
    assert store.count_rows(code) == acked
    t = store.tally(code, key)
    assert all(t[i]["answered"] == workers * per for i in range(COUNT))


def test_threads_replacing_the_same_answer_leave_one_row(store):
    code, key = store.create(SEED, COUNT)
    barrier = threading.Barrier(6)

    def one(k: int) -> None:
        barrier.wait()
        for n in range(10):
            store.submit(code, "same", 0, str(k * 100 + n))

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(one, range(6)))
    assert store.count_rows(code) == 1
    assert store.tally(code, key)[0]["answered"] == 1


# --------------------------------------------------------------------------- hostile input

SQL = [
    "'; DROP TABLE attnviz_answers; --",
    "1 OR 1=1",
    '" OR ""="',
    "1); DELETE FROM attnviz_classes; --",
    "%s %(x)s ? :item",
]


@pytest.mark.parametrize("text", SQL)
def test_sql_fragments_are_stored_literally(store, text):
    code, key = store.create(SEED, COUNT)
    assert store.submit(code, text[:64], 0, text) is False
    assert store.tally(code, key)[0]["wrong_answers"] == [(text.strip(), 1)]
    assert store.answers(code, text[:64]) == {0: (text.strip(), False)}
    assert store.info(code).code == code  # the tables are all still there
    with pytest.raises(ClassNotFound):
        store.info(text)


def test_queries_use_bound_parameters(store):
    code, key = store.create(SEED, COUNT)
    seen: list[tuple[str, object]] = []
    sa.event.listen(
        store.engine,
        "before_cursor_execute",
        lambda c, cur, stmt, params, *a: seen.append((stmt, params)),  # fmt: skip
    )
    marker = "zq'marker"
    store.submit(code, "s" + marker, 1, marker)
    store.tally(code, key)
    assert seen
    assert not any(marker in stmt or code in stmt for stmt, _ in seen)
    assert any(marker in str(params) for _, params in seen)


HOSTILE_ANSWERS = [
    "x" * 10_000,  # 10 kB
    "1" * 65,  # one over the limit
    "0.25\x00",  # NUL
    "\x1b[31m2",  # escape
    "2\r\n3",  # line breaks
    "\u202e52.0",  # right-to-left override
    "\ud800",  # a lone surrogate
    b"2",  # bytes, not text
    2,  # a number, not text
    None,
]


@pytest.mark.parametrize("answer", HOSTILE_ANSWERS, ids=range(len(HOSTILE_ANSWERS)))
def test_hostile_answers_are_refused_and_nothing_is_stored(sqlite_store, answer):
    code, key = sqlite_store.create(SEED, COUNT)
    with pytest.raises(ValueError, match="answer"):
        sqlite_store.submit(code, "s1", 0, answer)
    assert sqlite_store.count_rows(code) == 0


@pytest.mark.parametrize(
    "student, nickname",
    [
        ("x" * 10_000, None),
        ("", None),
        ("a\x00b", None),
        (None, None),
        ("s1", "n" * 25),
        ("s1", "Bob\x07"),
        ("s1", "x" * 10_000),
        ("s1", 5),
    ],
)
def test_hostile_students_and_nicknames_are_refused(sqlite_store, student, nickname):
    code, key = sqlite_store.create(SEED, COUNT)
    with pytest.raises(ValueError, match="student|nickname"):
        sqlite_store.submit(code, student, 0, "1", nickname=nickname)
    assert sqlite_store.count_rows(code) == 0


def test_a_printable_nickname_of_24_characters_is_kept(store):
    code, key = store.create(SEED, COUNT)
    store.submit(code, "s1", 0, "1", nickname="Ada Lovelace, 1815–1852!")
    store.submit(code, "s2", 0, "1", nickname="Ελένη 李雷 😀")
    with store.engine.connect() as conn:
        names = set(conn.execute(sa.select(classroom.answers_table.c.nickname)).scalars())
    assert names == {"Ada Lovelace, 1815–1852!", "Ελένη 李雷 😀"}


@pytest.mark.parametrize("item", [-1, COUNT, 10**12, True, 1.0, "0", None])
def test_items_out_of_range_are_refused(sqlite_store, item):
    code, key = sqlite_store.create(SEED, COUNT)
    with pytest.raises(ValueError, match="item"):
        sqlite_store.submit(code, "s1", item, "1")
    assert sqlite_store.count_rows(code) == 0


def test_each_check_refuses_on_each_database(store):
    """One case of each input check above, on SQLite and PostgreSQL: refused, nothing kept."""
    with pytest.raises(ValueError, match="seed|count"):
        store.create(-1, COUNT)
    code, key = store.create(SEED, COUNT)
    for student, item, answer, nickname, what in [
        ("s1", 0, "x" * 10_000, None, "answer"),
        ("a\x00b", 0, "1", None, "student"),
        ("s1", 0, "1", "Bob\x07", "nickname"),
        ("s1", COUNT, "1", None, "item"),
    ]:
        with pytest.raises(ValueError, match=what):
            store.submit(code, student, item, answer, nickname=nickname)
    assert store.count_rows(code) == 0


def test_unicode_look_alikes_of_a_code_are_no_code(store):
    code, key = store.create(SEED, COUNT)
    cyrillic = str.maketrans("ABCEHKMPTX", "АВСЕНКМРТХ")  # Cyrillic capitals
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in code)
    long_s = code.replace("S", "ſ") if "S" in code else "ſ" + code[1:]  # "ſ".upper() == "S"
    for fake in (code.translate(cyrillic), fullwidth, long_s, code + "\x00", "0" + code[1:]):
        if fake == code:
            continue
        with pytest.raises(ClassNotFound):
            store.submit(fake, "s1", 0, "1")
        with pytest.raises(ClassNotFound):
            store.tally(fake, key)
    assert store.count_rows(code) == 0
    for bad in ("x" * 10_000, "", None, 123456):
        with pytest.raises(ValueError):
            store.info(bad)


def test_look_alike_answers_are_stored_as_typed_and_counted_apart(store):
    code, key = store.create(SEED, COUNT)
    i = exercises.KINDS.index("scaling")
    e = ITEMS[i]
    other = next(c for c in e.choices if c != e.answer)
    latin = other.replace("e", "е").replace("a", "а")  # Cyrillic e and a look the same
    assert store.submit(code, "s1", i, latin) is (latin == e.answer)
    assert store.submit(code, "s2", i, other) is False
    wrong_answers = dict(store.tally(code, key)[i]["wrong_answers"])
    assert wrong_answers.get(other) == 1
    if latin != other:
        assert wrong_answers.get(latin) == 1


def test_an_unknown_database_kind_is_refused(tmp_path):
    with pytest.raises(ValueError, match="SQLite or PostgreSQL, got 'mysql'"):
        ClassStore("mysql://u@127.0.0.1:1/x")


def test_ci_and_the_test_script_install_postgresql():
    """A fresh machine gets Debian's postgresql (initdb is not on PATH: checked by path)."""
    root = Path(__file__).resolve().parents[2]
    for script in (root / ".ci" / "run", root / "scripts" / "test.sh"):
        text = script.read_text()
        assert 'compgen -G "/usr/lib/postgresql/*/bin/initdb"' in text, script
        installs = [ln for ln in text.splitlines() if "apt-get install" in ln]
        assert any("postgresql" in ln.split() for ln in installs), script


def test_the_store_grades_with_what_it_is_given_and_knows_no_exercise(url):
    """The store imports no exercise, engine or toy (the database layer stays small): of
    attnviz only its own schema module, which imports nothing of attnviz; its grading is
    given; its set limits are the exercises' own."""
    import ast

    for module in (classroom, classroom_schema):
        tree = ast.parse(Path(module.__file__).read_text())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        ours = {m for m in imported if m.startswith("attnviz")}
        assert ours <= {"attnviz.classroom.schema"} - {module.__name__}, (module, ours)
    assert (classroom.SEED_MAX, classroom.COUNT_MAX) == (exercises.SEED_MAX, exercises.COUNT_MAX)
    calls = []

    def grade(seed, count, item, answer):
        calls.append((seed, count, item, answer))
        return answer == "yes"

    s = ClassStore(url, grade=grade)
    code, _ = s.create(SEED, COUNT)
    assert s.submit(code, "s" * 16, 3, "yes") is True
    assert s.submit(code, "t" * 16, 3, "no") is False
    assert calls == [(SEED, COUNT, 3, "yes"), (SEED, COUNT, 3, "no")]
    teacher_only = ClassStore(url)
    with pytest.raises(TypeError, match="without a grade function"):
        teacher_only.submit(code, "u" * 16, 0, "1")
    assert s.count_rows(code) == 2
    s.dispose()
    teacher_only.dispose()


def test_joining_is_counted_once_per_student(store):
    code, key = store.create(SEED, COUNT)
    assert store.joined(code, key) == 0
    store.join(code, "a" * 16)
    store.join(code.lower(), "a" * 16)  # again: still one
    store.join(code, "b" * 16)
    assert store.joined(code, key) == 2
    with pytest.raises(ClassNotFound):
        store.join("QQQQQQ", "a" * 16)
    with pytest.raises(PermissionError):
        store.joined(code, "wrong key")
