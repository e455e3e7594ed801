"""attnviz's message catalogs: extract, update, compile, check, merge (docs/translating.md).

    python scripts/i18n.py extract   # attnviz/locale/attnviz.pot from the code, JS and HTML
    python scripts/i18n.py update    # each <lang>/LC_MESSAGES/attnviz.po from the .pot
    python scripts/i18n.py compile   # each .po -> .mo (optional: the app reads the .po too)
    python scripts/i18n.py check     # per language: share translated, placeholder mismatches
    python scripts/i18n.py init LANG # a new language's .po from the .pot
    python scripts/i18n.py merge FILE.json ...  # translations written as JSON into the .po

``check`` exits 1 when a translation's placeholders ({n}, %{z:.2f}, %(x)s) or HTML tags
differ from its English, or when a message is not translated in a language listed in
``COMPLETE`` (the languages shipped whole).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "attnviz" / "locale"
POT = LOCALE / "attnviz.pot"
DOMAIN = "attnviz"
COMPLETE = ("es", "zh_CN", "ar")  #: shipped whole: a message missing in one fails check
#: what is extracted, and how (Babel's method map); the student page's HTML is a template
#: whose texts are _("...") calls in attnviz/classroom/web (see docs/translating.md)
METHODS = [
    ("attnviz/**.py", "python"),
    ("pages/**.py", "python"),
    ("app.py", "python"),
    ("serve.py", "python"),
    ("attnviz/ui/board/js/*.js", "javascript"),
    ("attnviz/classroom/web/static/*.js", "javascript"),
    # the shipped lessons' titles and texts (attnviz/classroom/lessons/*.toml; docs/lessons.md)
    ("attnviz/classroom/lessons/*.toml", "attnviz.classroom.lessons:babel_extract"),
]
#: What extraction leaves out: the board's vendored JavaScript, and the modules of
#: attnviz/toys/ and attnviz/models/ whose texts are tensor names and command-line output
#: (their files one by one: toys/tasks.py's TASKS titles, toys/scores.py's JOBS and
#: models/head_patterns.py's PATTERNS reach the pages and are extracted).
SKIP = (
    "attnviz/ui/board/js/vendor/",
    "attnviz/models/__init__.py",
    "attnviz/models/bart.py",
    "attnviz/models/catalog.py",
    "attnviz/models/causal.py",
    "attnviz/models/checkpoint.py",
    "attnviz/models/encdec.py",
    "attnviz/models/encoder.py",
    "attnviz/models/families.py",
    "attnviz/models/gemma3.py",
    "attnviz/models/gguf_file.py",
    "attnviz/models/gpt2.py",
    "attnviz/models/head_probes.py",
    "attnviz/models/layers.py",
    "attnviz/models/llama.py",
    "attnviz/models/minilm.py",
    "attnviz/models/smollm.py",
    "attnviz/models/t5.py",
    "attnviz/toys/__init__.py",
    "attnviz/toys/__main__.py",
    "attnviz/toys/backward.py",
    "attnviz/toys/cli.py",
    "attnviz/toys/model.py",
    "attnviz/toys/runner.py",
    "attnviz/toys/runs.py",
    "attnviz/toys/training.py",
)
KEYWORDS = {
    "_": None,
    "N_": None,
    "gettext": None,
    "ngettext": (1, 2),
    "pgettext": ((1, "c"), 2),
    "npgettext": ((1, "c"), 2, 3),
    # attnviz.teaching.wording.plural(n, "small matrix", "small matrices"): its two words by
    # ngettext
    "plural": (2, 3),
}
PLACEHOLDER = re.compile(r"\{[A-Za-z_][\w.]*(?:![rsa])?(?::[^{}]*)?\}|%\{[^{}]*\}|%\([^)]*\)[sdif]")
TAG = re.compile(r"</?[a-zA-Z][^>]*>")


def extract() -> Catalog:
    cat = Catalog(project="attnviz", charset="utf-8", fuzzy=False)
    method_map = [(p, m) for p, m in METHODS]
    options = {"**.js": {"parse_template_string": True}}
    for file, line, msg, comments, ctx in extract_from_dir(
        str(ROOT),
        method_map,
        options_map=options,
        keywords=KEYWORDS,
        comment_tags=("TRANSLATORS:",),
        strip_comment_tags=True,
    ):
        if (
            any(file.startswith(s) for s in SKIP)
            or not msg
            or not (msg[0] if isinstance(msg, tuple) else msg)
        ):
            continue
        cat.add(msg, None, [(file, line)], auto_comments=comments, context=ctx)
    with POT.open("wb") as f:
        write_po(f, cat, width=100, sort_output=False, omit_header=False)
    return cat


def languages() -> list[str]:
    return sorted(p.parent.parent.name for p in LOCALE.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def po_path(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def read(path: Path, lang: str | None = None) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=lang)


def write(path: Path, cat: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, cat, width=100, include_previous=False)


def update() -> None:
    template = read(POT)
    for lang in languages():
        cat = read(po_path(lang), lang)
        cat.update(template, no_fuzzy_matching=True)
        write(po_path(lang), cat)


def init(lang: str) -> None:
    template = read(POT)
    cat = Catalog(locale=lang, project="attnviz", charset="utf-8")
    cat.update(template, no_fuzzy_matching=True)
    write(po_path(lang), cat)


def compile_all() -> None:
    for lang in languages():
        cat = read(po_path(lang), lang)
        with po_path(lang).with_suffix(".mo").open("wb") as f:
            write_mo(f, cat, use_fuzzy=False)


def _forms(msg) -> list[str]:
    return list(msg) if isinstance(msg, tuple | list) else [msg]


def mismatches(english, translated) -> list[str]:
    """Why a translation's placeholders or tags differ from its English ([] if they agree)."""
    source = _forms(english)
    want = set(PLACEHOLDER.findall(" ".join(source)))
    tags = sorted(TAG.findall(source[0]))
    out = []
    for form in _forms(translated):
        if not form:
            continue
        got = set(PLACEHOLDER.findall(form))
        # a plural form may leave out the count ("one head"); no other placeholder may differ
        if got - want or (want - got) - {"{n}", "{count}"}:
            out.append(f"placeholders {sorted(got)} != {sorted(want)}")
        if sorted(TAG.findall(form)) != tags:
            out.append(f"tags {sorted(TAG.findall(form))} != {tags}")
    return out


def check(quiet: bool = False) -> int:
    template = read(POT)
    ids = {(m.id if isinstance(m.id, str) else m.id[0], m.context) for m in template if m.id}
    bad = 0
    for lang in languages():
        cat = read(po_path(lang), lang)
        done = missing = 0
        for m in cat:
            if not m.id:
                continue
            key = (m.id if isinstance(m.id, str) else m.id[0], m.context)
            if key not in ids:
                continue
            if m.string and all(_forms(m.string)) and not m.fuzzy:
                done += 1
                for why in mismatches(m.id, m.string):
                    bad += 1
                    print(f"{lang}: {key[0]!r}: {why}")
            else:
                missing += 1
        total = len(ids)
        absent = total - done - missing
        share = 100.0 * done / total if total else 100.0
        print(f"{lang}: {done}/{total} translated ({share:.1f}%), {missing + absent} missing")
        if lang in COMPLETE and done < total:
            bad += 1
    return 1 if bad else 0


def merge(files: list[str]) -> None:
    """Translations written as JSON lists of {"msgid", "msgctxt"?, "msgid_plural"?, "es",
    "zh_CN", "ar"} (a list of forms for a plural) go into each .po (the .pot's messages)."""
    entries = []
    for f in files:
        entries.extend(json.loads(Path(f).read_text()))
    for lang in languages():
        cat = read(po_path(lang), lang)
        n = cat.num_plurals
        for e in entries:
            if lang not in e or not e[lang]:
                continue
            msg = cat.get(e["msgid"], context=e.get("msgctxt"))
            if msg is None:
                continue
            value = e[lang]
            if msg.pluralizable:
                forms = value if isinstance(value, list) else [value]
                forms = (forms + [forms[-1]] * n)[:n]
                msg.string = tuple(forms)
            else:
                msg.string = value if isinstance(value, str) else value[0]
            msg.flags.discard("fuzzy")
        write(po_path(lang), cat)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "extract":
        cat = extract()
        print(f"{POT.relative_to(ROOT)}: {len(cat)} messages")
    elif cmd == "update":
        update()
    elif cmd == "init":
        init(rest[0])
    elif cmd == "compile":
        compile_all()
    elif cmd == "check":
        return check()
    elif cmd == "merge":
        merge(rest)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
