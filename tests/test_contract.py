"""The import paths others call (attnviz/__init__.py, ``CONTRACT``): every import the docs
show works, an old path is the real module itself, and ``import attnviz`` stays cheap.

Each check runs in a fresh interpreter, so that nothing imported by another test hides a
path that does not resolve on its own.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from test_layout import run_fresh

import attnviz

ROOT = Path(__file__).resolve().parents[1]
#: The documents whose import paths are the contract (issue 49).
DOCS = ("docs/engine.md", "docs/classroom.md", "docs/models.md", "README.md")
#: What the brief names besides (notebooks and acceptance checks call these).
NAMED = (
    "from attnviz.engine import AttentionParams, multi_head_attention, causal_mask",
    "from attnviz.classroom import ClassStore",
    "from attnviz import exercises, toys, models",
)
IMPORT = re.compile(r"^(from attnviz[\w.]* import [\w, ]+\w|import attnviz[\w.]*(?: as \w+)?)")


def shown_imports(text: str) -> list[str]:
    """Every import statement of attnviz the text shows: a line of a code block, or
    inline code (`` `import attnviz.models.smollm` ``); a block's ``from x import (`` spanning
    lines is read to its closing bracket."""
    text = re.sub(r"\(\s*([\w,\s]+?),?\s*\)", lambda m: " ".join(m.group(1).split()), text)
    found = []
    for piece in [*text.splitlines(), *re.findall(r"`([^`\n]+)`", text)]:
        if m := IMPORT.match(piece.strip()):
            found.append(m.group(1))
    return list(dict.fromkeys(found))


def run(code: str) -> dict:
    return run_fresh([code])


def test_the_reader_finds_every_spelling():
    text = textwrap.dedent(
        """
        ```python
        from attnviz.engine import (
            apply_rope,
            softmax,
        )
        import attnviz.models.smollm as sm
        x = 1  # from attnviz import nothing (a comment, not a line of its own)
        ```
        | `import attnviz.models.minilm` | 149 ms |
        """
    )
    assert shown_imports(text) == [
        "from attnviz.engine import apply_rope, softmax",
        "import attnviz.models.smollm as sm",
        "import attnviz.models.minilm",
    ]


def every_shown() -> list[str]:
    out = [line for doc in DOCS for line in shown_imports((ROOT / doc).read_text())]
    return list(dict.fromkeys([*out, *NAMED]))


def test_the_docs_show_the_contract():
    shown = every_shown()
    assert len(shown) >= 8
    assert any(s.startswith("from attnviz.engine import") for s in shown)
    assert "from attnviz import exercises" in shown  # docs/classroom.md


CHECK = textwrap.dedent(
    """
    import json, sys
    errors = {}
    for line in sys.argv[1:]:
        try:
            exec(line, {})
        except Exception as err:
            errors[line] = f"{type(err).__name__}: {err}"
    print(json.dumps(errors))
    """
)


def test_every_import_the_docs_show_works():
    shown = every_shown()
    errors = run(CHECK.replace("sys.argv[1:]", repr(shown)))
    assert errors == {}, errors


@pytest.mark.parametrize("old", sorted(attnviz.CONTRACT))
def test_an_old_path_is_the_real_module(old):
    real = attnviz.CONTRACT[old]
    short = old.rsplit(".", 1)[1]
    got = run(
        textwrap.dedent(
            f"""
            import json, sys
            from attnviz import {short} as by_from
            import {old} as by_import
            import {real} as really
            print(json.dumps({{
                "same": by_from is by_import is really is sys.modules["{old}"],
                "name": really.__name__,
            }}))
            """
        )
    )
    assert got == {"same": True, "name": real}


def test_import_attnviz_stays_cheap_and_unknown_names_fail():
    got = run(
        textwrap.dedent(
            """
            import json, sys
            import attnviz
            loaded = sorted(m for m in sys.modules if m.split(".")[0] in
                            ("attnviz", "numpy", "sqlalchemy", "streamlit"))
            try:
                from attnviz import no_such_module
                missing = "imported"
            except ImportError as err:
                missing = str(err)
            print(json.dumps({"loaded": loaded, "missing": missing}))
            """
        )
    )
    assert got["loaded"] == ["attnviz"]
    assert "no_such_module" in got["missing"]
