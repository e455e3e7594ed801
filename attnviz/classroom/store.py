"""A live class: the store of a class's answers, shared by every server process.

No Streamlit here (the views are in :mod:`attnviz.ui.live`). SQLAlchemy Core, one code
path for SQLite (one server: a file under ``$ATTNVIZ_DATA_DIR``, WAL mode and a busy
timeout) and PostgreSQL (replicas: ``ATTNVIZ_DATABASE_URL=postgresql+psycopg://...``)::

    from attnviz.classroom import ClassStore
    store = ClassStore(grade=exercises.grade)    # the default URL (default_url())
    code, key = store.create(seed=12, count=8)   # "K7QX2M", a 128-bit secret
    store.submit(code, student, 0, " 2")         # True: right (exercises' check)
    store.tally(code, key)[0]                    # {"answered": 1, "right": 1, ...}
    store.reveal(code, key, 0); store.close(code, key)

1. A class is a row (code, hash of the teacher key, seed, count, created, closed);
   its revealed items and its answers are rows of their own.
2. ``submit`` checks the answer with the store's ``grade(seed, count, item, answer)``
   (given by its maker: :func:`attnviz.classroom.exercises.grade` for the exercises; the store
   itself knows no exercise, engine or toy) and upserts (code, student, item): a
   student's later answer replaces the earlier one.
3. ``tally`` counts the rows, so each student's latest answer counts once.
4. Classes expire 24 h after creation: an expired class is not found, and ``create``
   deletes expired classes with their answers.

5. A class started from a lesson (``create(seed, count, lesson, items)``) keeps the
   lesson's name and questions in a row of its own (``attnviz_class_plans``, created on
   first use); :class:`ClassInfo` gives them back, and ``grade`` gets them.

6. View questions ("predict, then reveal", :mod:`attnviz.ui.predict`): ``ask`` stores a
   question about the view on the projector (page, link, settings digest, choices, the
   right choice, the cell to outline) as the class's current one; ``answer_question``
   upserts a student's choice until ``reveal_question``; ``question_tally`` counts the
   choices. Their two tables are created on first use (also in an older database).

Bad input raises ``ValueError`` (nothing is stored); a wrong teacher key raises
``PermissionError``. Every query uses bound parameters.

What the store stands on (the limits, the tables, the records :class:`ClassInfo` and
:class:`ViewQuestion`, the input checks, the engine) is :mod:`attnviz.classroom.schema`;
every public name of it is importable from here, as before.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import Counter
from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from attnviz.classroom.schema import (
    CHOICE_MAX,
    CHOICES_MAX,
    CODE_ALPHABET,
    CODE_LENGTH,
    COUNT_MAX,
    DETAIL_MAX,
    KEY_BYTES,
    LINK_MAX,
    PROMPT_MAX,
    SCHEMA_VERSION,
    SEED_MAX,
    STUDENT_MAX,
    TTL_SECONDS,
    VIEW_KINDS,
    ClassClosed,
    ClassInfo,
    ClassNotFound,
    Grade,
    ViewQuestion,
    _check_text,
    _hash_key,
    _no_grade,
    answers_table,
    check_answer,
    check_nickname,
    check_plan,
    classes_table,
    default_url,
    joined_table,
    make_engine,
    meta_table,
    metadata,
    normalize_code,
    plans_table,
    reveals_table,
    view_answers_table,
    view_questions_table,
)


class ClassStore:
    """The classes and answers in one database (see the module docstring).

    ``url``: a SQLAlchemy URL, default :func:`default_url`. ``clock``: Unix time in
    seconds (tests move it to expire classes). ``grade``: how :meth:`submit` checks an
    answer (:data:`Grade`; a store without one serves the teacher's side only). Safe to
    share between threads; several stores (processes, replicas) on one database lose
    nothing."""

    def __init__(
        self,
        url: str | None = None,
        clock: Callable[[], float] = time.time,
        grade: Grade | None = None,
    ) -> None:
        self.url = url or default_url()
        self.grade = grade or _no_grade
        backend = sa.engine.make_url(self.url).get_backend_name()
        if backend not in ("sqlite", "postgresql"):
            raise ValueError(f"the class store runs on SQLite or PostgreSQL, got {backend!r}")
        self.clock = clock
        self.engine = make_engine(self.url)
        self._insert = postgresql.insert if backend == "postgresql" else sqlite.insert
        self._setup()

    def __repr__(self) -> str:
        return f"ClassStore({self.engine.url.render_as_string(hide_password=True)!r})"

    def dispose(self) -> None:
        """Close the pooled connections (a test's teardown, a forked child)."""
        self.engine.dispose()

    # -- schema ----------------------------------------------------------------------

    def _setup(self) -> None:
        """Create the tables on first use and record the schema version; refuse another."""
        for attempt in range(5):
            try:
                metadata.create_all(self.engine, checkfirst=True)
                with self.engine.begin() as conn:
                    conn.execute(
                        self._insert(meta_table)
                        .values(name="schema_version", value=str(SCHEMA_VERSION))
                        .on_conflict_do_nothing()
                    )
                break
            except sa.exc.DBAPIError:  # another process created the same tables just now
                if attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))
        with self.engine.connect() as conn:
            found = conn.execute(
                sa.select(meta_table.c.value).where(meta_table.c.name == "schema_version")
            ).scalar_one()
        if found != str(SCHEMA_VERSION):
            raise RuntimeError(
                f"the class database has schema version {found}, this attnviz expects "
                f"{SCHEMA_VERSION}: {self!r}"
            )

    # -- reading a class -------------------------------------------------------------

    def _row(self, conn: sa.Connection, code: str) -> sa.Row:
        row = conn.execute(
            sa.select(classes_table).where(classes_table.c.code == code)
        ).one_or_none()
        if row is None or row.created + TTL_SECONDS <= self.clock():
            raise ClassNotFound(f"no class with the code {code} (a wrong code, or it expired)")
        return row

    def _authorised(self, conn: sa.Connection, code: object, teacher_key: object) -> sa.Row:
        row = self._row(conn, normalize_code(code))
        if not isinstance(teacher_key, str) or not hmac.compare_digest(
            _hash_key(teacher_key), row.key_hash
        ):
            raise PermissionError(f"wrong teacher key for the class {row.code}")
        return row

    def info(self, code: object) -> ClassInfo:
        """The class a student joins: seed, count, revealed items, closed.
        ClassNotFound (a ValueError) for a wrong or expired code."""
        code = normalize_code(code)
        with self.engine.connect() as conn:
            row = self._row(conn, code)
            revealed = conn.execute(
                sa.select(reveals_table.c.item).where(reveals_table.c.code == code)
            ).scalars()
            revealed = frozenset(int(i) for i in revealed)
            plan = conn.execute(
                sa.select(plans_table.c.lesson, plans_table.c.questions).where(
                    plans_table.c.code == code
                )
            ).one_or_none()
        lesson, items = (plan.lesson, tuple(plan.questions.split(","))) if plan else ("", ())
        return ClassInfo(
            row.code, int(row.seed), int(row.count), row.created, bool(row.closed), revealed,
            lesson, items,
        )  # fmt: skip

    def authorised(self, code: object, teacher_key: object) -> bool:
        """Whether ``teacher_key`` is the key of the class (ClassNotFound if none)."""
        try:
            with self.engine.connect() as conn:
                self._authorised(conn, code, teacher_key)
            return True
        except PermissionError:
            return False

    def teaches(self, code: object, teacher_key: object) -> bool:
        """Whether ``teacher_key`` is the key of the class and the class is still open: one
        read of its row, for a page that asks on every run (ClassNotFound if no class)."""
        try:
            with self.engine.connect() as conn:
                return not self._authorised(conn, code, teacher_key).closed
        except PermissionError:
            return False

    # -- the teacher -----------------------------------------------------------------

    def create(
        self, seed: int, count: int, lesson: str = "", items: tuple[str, ...] = ()
    ) -> tuple[str, str]:
        """A new class on ``exercises.generate(seed, count)``: (join code, teacher key).
        Started from a lesson (``lesson``, its name, and ``items``, its questions as
        ``kind@seed``), the class asks ``items`` first, then the generated set's
        ``count - len(items)`` questions (none: the lesson's only). Expired classes are
        deleted first."""
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
            raise ValueError(f"seed must be an integer from 0 to {SEED_MAX}, got {seed!r}")
        if isinstance(count, bool) or not isinstance(count, int):
            raise ValueError(f"count must be an integer, got {count!r}")
        if not 1 <= count <= COUNT_MAX:
            raise ValueError(f"count must be from 1 to {COUNT_MAX}, got {count}")
        plan = check_plan(lesson, items, count) if lesson or items else None
        self.purge()
        key = secrets.token_urlsafe(KEY_BYTES)
        for _ in range(10):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        classes_table.insert().values(
                            code=code, key_hash=_hash_key(key), seed=int(seed),
                            count=int(count), created=self.clock(), closed=False,
                        )
                    )  # fmt: skip
                    if plan is not None:
                        conn.execute(
                            plans_table.insert().values(
                                code=code, lesson=plan[0], questions=",".join(plan[1])
                            )
                        )
                return code, key
            except sa.exc.IntegrityError:  # the code is taken: draw another
                continue
        raise RuntimeError("no free class code after 10 draws")

    def tally(self, code: object, teacher_key: object) -> dict[int, dict]:
        """Per item index: ``{"answered", "right", "wrong", "wrong_answers"}``, each
        student's latest answer counted once; ``wrong_answers`` is ``[(answer, count)]``,
        most common first. PermissionError for a wrong key."""
        a = answers_table.c
        with self.engine.connect() as conn:
            row = self._authorised(conn, code, teacher_key)
            rows = conn.execute(
                sa.select(a.item, a.right, a.answer, sa.func.count().label("n"))
                .where(a.code == row.code)
                .group_by(a.item, a.right, a.answer)
            ).all()
        out = {
            i: {"answered": 0, "right": 0, "wrong": 0, "wrong_answers": []}
            for i in range(int(row.count))
        }
        wrong: dict[int, Counter] = {i: Counter() for i in out}
        for item, right, answer, n in rows:
            if item not in out:
                continue
            t = out[item]
            t["answered"] += n
            t["right" if right else "wrong"] += n
            if not right:
                wrong[item][answer] += n
        for i, c in wrong.items():
            out[i]["wrong_answers"] = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
        return out

    def students(self, code: object, teacher_key: object) -> int:
        """How many students answered at least once."""
        a = answers_table.c
        with self.engine.connect() as conn:
            row = self._authorised(conn, code, teacher_key)
            return int(
                conn.execute(
                    sa.select(sa.func.count(sa.distinct(a.student))).where(a.code == row.code)
                ).scalar_one()
            )

    def joined(self, code: object, teacher_key: object) -> int:
        """How many students opened the class's page (answered or not)."""
        j = joined_table.c
        with self.engine.connect() as conn:
            row = self._authorised(conn, code, teacher_key)
            return int(
                conn.execute(
                    sa.select(sa.func.count()).select_from(joined_table).where(j.code == row.code)
                ).scalar_one()
            )

    def nicknames(self, code: object, teacher_key: object) -> list[str]:
        """The nicknames students gave (each once, sorted)."""
        a = answers_table.c
        with self.engine.connect() as conn:
            row = self._authorised(conn, code, teacher_key)
            names = conn.execute(
                sa.select(a.nickname).where(a.code == row.code, a.nickname.is_not(None)).distinct()
            ).scalars()
            return sorted(names)

    def reveal(self, code: object, teacher_key: object, item: int) -> None:
        """Show item's answer and explanation on the students' pages (idempotent)."""
        with self.engine.begin() as conn:
            row = self._authorised(conn, code, teacher_key)
            item = self._check_item(item, int(row.count))
            conn.execute(
                self._insert(reveals_table)
                .values(code=row.code, item=item)
                .on_conflict_do_nothing()
            )

    def close(self, code: object, teacher_key: object) -> None:
        """End the class: it takes no more answers (the teacher still sees the tally
        until it expires)."""
        with self.engine.begin() as conn:
            row = self._authorised(conn, code, teacher_key)
            conn.execute(
                classes_table.update().where(classes_table.c.code == row.code).values(closed=True)
            )

    def purge(self) -> int:
        """Delete classes older than 24 h with their answers and reveals; how many."""
        cutoff = self.clock() - TTL_SECONDS
        c = classes_table.c
        with self.engine.begin() as conn:
            old = sa.select(c.code).where(c.created <= cutoff)
            tables = (
                answers_table, reveals_table, view_answers_table, view_questions_table,
                joined_table, plans_table,
            )  # fmt: skip
            for table in tables:
                conn.execute(table.delete().where(table.c.code.in_(old)))
            return conn.execute(classes_table.delete().where(c.created <= cutoff)).rowcount

    # -- the students ----------------------------------------------------------------

    @staticmethod
    def _check_item(item: object, count: int) -> int:
        if isinstance(item, bool) or not isinstance(item, int):
            raise ValueError(f"an item is a question's index, got {item!r}")
        if not 0 <= item < count:
            raise ValueError(f"item must be from 0 to {count - 1}, got {item}")
        return int(item)

    def submit(
        self,
        code: object,
        student: object,
        item: int,
        answer: str,
        nickname: str | None = None,
    ) -> bool:
        """Check ``answer`` to question ``item`` and store it (replacing this student's
        earlier answer to it); whether it is right. ValueError, and nothing stored, for a
        wrong or expired code, a closed class, an item out of range, an answer over 64
        characters or with control characters."""
        code = normalize_code(code)
        student = _check_text("a student id", student, STUDENT_MAX)
        answer = check_answer(answer)
        nickname = check_nickname(nickname)
        # 1) the class (a read of its own: a SQLite transaction that reads then writes
        #    cannot wait for another writer, one that starts with its write can)
        info = self.info(code)
        if info.closed:
            raise ClassClosed(f"the class {code} has ended: answers are no longer taken")
        item = self._check_item(item, info.count)
        # 2) check, then upsert (code, student, item)
        if info.items:  # a lesson's class: its questions first (schema.Grade)
            right = bool(self.grade(info.seed, info.count, item, answer, info.items))
        else:
            right = bool(self.grade(info.seed, info.count, item, answer))
        values = dict(answer=answer, right=right, nickname=nickname, at=self.clock())
        stmt = self._insert(answers_table).values(code=code, student=student, item=item, **values)
        stmt = stmt.on_conflict_do_update(index_elements=["code", "student", "item"], set_=values)
        with self.engine.begin() as conn:
            conn.execute(stmt)
        return right

    def join(self, code: object, student: object) -> None:
        """Record that ``student`` opened the class's page (once; again is a no-op).
        ClassNotFound for a wrong or expired code; a closed class is joined too (its page
        says it ended)."""
        code = normalize_code(code)
        student = _check_text("a student id", student, STUDENT_MAX)
        self.info(code)
        stmt = self._insert(joined_table).values(code=code, student=student, at=self.clock())
        with self.engine.begin() as conn:
            conn.execute(stmt.on_conflict_do_nothing())

    def answers(self, code: object, student: object) -> dict[int, tuple[str, bool]]:
        """A student's stored answers: item -> (answer, right); a page that reconnects
        (another replica) shows them again."""
        code = normalize_code(code)
        student = _check_text("a student id", student, STUDENT_MAX)
        a = answers_table.c
        with self.engine.connect() as conn:
            self._row(conn, code)
            rows = conn.execute(
                sa.select(a.item, a.answer, a.right).where(a.code == code, a.student == student)
            ).all()
        return {int(i): (ans, bool(r)) for i, ans, r in rows}

    def count_rows(self, code: object) -> int:
        """The stored answer rows of a class (benchmarks: rows = acknowledged answers)."""
        code = normalize_code(code)
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    sa.select(sa.func.count()).where(answers_table.c.code == code)
                ).scalar_one()
            )

    # -- view questions ("predict, then reveal") ---------------------------------------

    @staticmethod
    def _check_question(
        page: object, link: object, view: object, kind: object, prompt: object,
        choices: object, answer: object, detail: object,
    ) -> tuple[str, str, str, str, str, tuple[str, ...], int, str]:  # fmt: skip
        page = _check_text("a page name", page, 32)
        link = _check_text("a view's link", link, LINK_MAX, allow_empty=True)
        view = _check_text("a view digest", view, 64)
        if kind not in VIEW_KINDS:
            raise ValueError(f"a view question's kind is one of {VIEW_KINDS}, got {kind!r}")
        prompt = _check_text("a question", prompt, PROMPT_MAX)
        if isinstance(choices, str) or not isinstance(choices, (list, tuple)):
            raise ValueError(f"choices must be a list of text, got {type(choices).__name__}")
        if not 2 <= len(choices) <= CHOICES_MAX:
            raise ValueError(f"a question has 2 to {CHOICES_MAX} choices, got {len(choices)}")
        choices = tuple(_check_text("a choice", c, CHOICE_MAX).strip() for c in choices)
        if len(set(choices)) != len(choices):
            raise ValueError(f"the choices must differ, got {list(choices)}")
        answer = ClassStore._check_item(answer, len(choices))
        if not isinstance(detail, dict) or not all(
            isinstance(k, str) and k.isidentifier() and isinstance(v, int)
            and not isinstance(v, bool)
            for k, v in detail.items()
        ):  # fmt: skip
            raise ValueError(f"detail maps names to whole numbers, got {detail!r}")
        text = ",".join(f"{k}={v}" for k, v in detail.items())
        if len(text) > DETAIL_MAX:
            raise ValueError(f"detail is at most {DETAIL_MAX} characters, got {len(text)}")
        return page, link, view, kind, prompt, choices, answer, text

    def ask(
        self, code: object, teacher_key: object, *, page: str, link: str, view: str,
        kind: str, prompt: str, choices: list[str], answer: int, detail: dict[str, int],
    ) -> int:  # fmt: skip
        """Ask the room about the view on screen; the question's number (1, 2, ...). It
        becomes the class's current view question (an earlier one is left as it was).
        ValueError for bad fields or a closed class; PermissionError for a wrong key."""
        fields = self._check_question(page, link, view, kind, prompt, choices, answer, detail)
        page, link, view, kind, prompt, choices, answer, text = fields
        q = view_questions_table.c
        for _ in range(10):
            try:
                with self.engine.begin() as conn:
                    row = self._authorised(conn, code, teacher_key)
                    if row.closed:
                        raise ClassClosed(f"the class {row.code} has ended: no more questions")
                    last = conn.execute(
                        sa.select(sa.func.max(q.qid)).where(q.code == row.code)
                    ).scalar_one()
                    qid = int(last or 0) + 1
                    conn.execute(
                        view_questions_table.insert().values(
                            code=row.code, qid=qid, page=page, link=link, view=view,
                            kind=kind, prompt=prompt, choices="\n".join(choices),
                            answer=answer, detail=text, revealed=False, created=self.clock(),
                        )
                    )  # fmt: skip
                return qid
            except sa.exc.IntegrityError:  # another tab asked at the same moment
                continue
        raise RuntimeError("the question could not be numbered after 10 tries")

    def question(self, code: object) -> ViewQuestion | None:
        """The class's current (latest) view question, or None. ClassNotFound for a wrong
        or expired code."""
        code = normalize_code(code)
        q = view_questions_table.c
        with self.engine.connect() as conn:
            self._row(conn, code)
            row = conn.execute(
                sa.select(view_questions_table).where(q.code == code).order_by(q.qid.desc())
            ).first()
        if row is None:
            return None
        detail = dict((k, int(v)) for k, v in (p.split("=") for p in row.detail.split(",") if p))
        return ViewQuestion(
            row.code, int(row.qid), row.page, row.link, row.view, row.kind, row.prompt,
            tuple(row.choices.split("\n")), int(row.answer), detail, bool(row.revealed),
        )  # fmt: skip

    def answer_question(self, code: object, student: object, qid: object, choice: object) -> None:
        """Store a student's choice for view question ``qid`` (a later one replaces it).
        ValueError, nothing stored, if ``qid`` is not the current question, it was
        revealed, the class ended, or ``choice`` is out of range."""
        code = normalize_code(code)
        student = _check_text("a student id", student, STUDENT_MAX)
        info = self.info(code)
        if info.closed:
            raise ClassClosed(f"the class {code} has ended: answers are no longer taken")
        current = self.question(code)
        if current is None or current.qid != qid:
            raise ValueError(f"question {qid!r} is not the class's current question")
        if current.revealed:
            raise ValueError(f"question {qid} was revealed: answers are closed")
        choice = self._check_item(choice, len(current.choices))
        values = dict(choice=choice, at=self.clock())
        stmt = self._insert(view_answers_table).values(
            code=code, qid=current.qid, student=student, **values
        )
        stmt = stmt.on_conflict_do_update(index_elements=["code", "qid", "student"], set_=values)
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def my_choice(self, code: object, student: object, qid: int) -> int | None:
        """A student's choice for view question ``qid``, or None."""
        code = normalize_code(code)
        student = _check_text("a student id", student, STUDENT_MAX)
        a = view_answers_table.c
        with self.engine.connect() as conn:
            value = conn.execute(
                sa.select(a.choice).where(a.code == code, a.qid == qid, a.student == student)
            ).scalar_one_or_none()
        return None if value is None else int(value)

    def question_tally(self, code: object, teacher_key: object, qid: int) -> list[int]:
        """How many students picked each choice of view question ``qid`` (their latest
        pick). ValueError for no such question; PermissionError for a wrong key."""
        a, q = view_answers_table.c, view_questions_table.c
        with self.engine.connect() as conn:
            row = self._authorised(conn, code, teacher_key)
            choices = conn.execute(
                sa.select(q.choices).where(q.code == row.code, q.qid == qid)
            ).scalar_one_or_none()
            if choices is None:
                raise ValueError(f"the class {row.code} has no view question {qid!r}")
            rows = conn.execute(
                sa.select(a.choice, sa.func.count())
                .where(a.code == row.code, a.qid == qid)
                .group_by(a.choice)
            ).all()
        counts = [0] * len(choices.split("\n"))
        for choice, n in rows:
            if 0 <= choice < len(counts):
                counts[choice] += int(n)
        return counts

    def reveal_question(self, code: object, teacher_key: object, qid: int) -> None:
        """Reveal view question ``qid``'s answer (on the chart, on the students' pages);
        its answers close. Idempotent; ValueError for no such question."""
        q = view_questions_table.c
        with self.engine.begin() as conn:
            row = self._authorised(conn, code, teacher_key)
            done = conn.execute(
                view_questions_table.update()
                .where(q.code == row.code, q.qid == qid)
                .values(revealed=True)
            ).rowcount
        if not done:
            raise ValueError(f"the class {row.code} has no view question {qid!r}")
