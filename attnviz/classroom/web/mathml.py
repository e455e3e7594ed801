"""The exercises' LaTeX as MathML, written on the server: a phone shows it natively, with no
math library to download (MathML Core is in every current browser).

Only the LaTeX attnviz writes is understood (:mod:`attnviz.classroom.exercises`,
:mod:`attnviz.teaching.latex`):
numbers, letters, operators, ``_`` and ``^``, groups, ``\\frac``, ``\\sqrt``, ``\\mathrm``,
``\\mathbf``, ``\\text``, ``bmatrix`` (and ``pmatrix``, ``matrix``) and the symbols in
:data:`SYMBOLS`. Anything else raises :class:`UnknownLatex`, so a test over every
generated exercise finds a command this module does not know before a student does::

    to_mathml(r"a_{3,3} = \\frac{e^{0.5}}{\\sum_j e^{s_j}}")   # '<math display="inline">...'

Every text that reaches the output is escaped (``&``, ``<``, ``>``).
"""

from __future__ import annotations

import html
import re

#: Commands that stand for one symbol: (MathML element, text).
SYMBOLS: dict[str, tuple[str, str]] = {
    "cdot": ("mo", "·"),
    "times": ("mo", "×"),
    "approx": ("mo", "≈"),
    "sum": ("mo", "∑"),
    "ldots": ("mo", "…"),
    "dots": ("mo", "…"),
    "cdots": ("mo", "⋯"),
    "infty": ("mi", "∞"),
    "le": ("mo", "≤"),
    "leq": ("mo", "≤"),
    "ge": ("mo", "≥"),
    "geq": ("mo", "≥"),
    "neq": ("mo", "≠"),
    "in": ("mo", "∈"),
    "to": ("mo", "→"),
    "pm": ("mo", "±"),
    "top": ("mi", "⊤"),
    "sqrt": ("mo", "√"),  # only when not followed by a group (see _command)
    "exp": ("mi", "exp"),
    "log": ("mi", "log"),
    "max": ("mi", "max"),
    "min": ("mi", "min"),
    "alpha": ("mi", "α"),
    "beta": ("mi", "β"),
    "gamma": ("mi", "γ"),
    "delta": ("mi", "δ"),
    "theta": ("mi", "θ"),
    "lambda": ("mi", "λ"),
    "mu": ("mi", "μ"),
    "pi": ("mi", "π"),
    "sigma": ("mi", "σ"),
    "tau": ("mi", "τ"),
    "omega": ("mi", "ω"),
    "Omega": ("mi", "Ω"),
}
#: Spaces: ``\\qquad``, ``\\quad``, ``\\,``, ``\\;``, ``\\ ``, ``\\!``.
SPACES = {"qquad": "2em", "quad": "1em", ",": "0.17em", ";": "0.28em", " ": "0.25em", "!": "0"}
#: Matrix environments (their brackets are drawn by the page's style sheet, by class).
MATRICES = ("bmatrix", "pmatrix", "matrix")
#: Commands whose group is shown as upright text.
TEXT_COMMANDS = {"mathrm": "mi", "operatorname": "mi", "text": "mtext", "mathbf": "mi"}

#: Closing brackets: a ``-`` after one subtracts.
CLOSING = ("<mo>)</mo>", "<mo>]</mo>", "<mo>|</mo>")
#: A number is digits, then a decimal point or a braced decimal comma (``0{,}35``, the
#: exercises' LaTeX in a language that writes one) and digits.
_TOKEN = re.compile(
    r"\s+|\\\\|\\[A-Za-z]+|\\[,;! ]|\d+(?:(?:\.|\{,\})\d+)?|[A-Za-z]|[{}_^&]|[^\s\\{}_^&]"
)


class UnknownLatex(ValueError):
    """LaTeX this module does not understand (the text says which command, and where)."""


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _tokens(tex: str) -> list[tuple[str, int]]:
    """The tokens of ``tex`` with where each ends (white space dropped)."""
    out, at = [], 0
    while at < len(tex):
        m = _TOKEN.match(tex, at)
        if m is None:  # a lone backslash at the end
            raise UnknownLatex(f"a stray backslash at {at} in {tex!r}")
        if not m.group().isspace():
            out.append((m.group(), m.end()))
        at = m.end()
    return out


class _Parser:
    def __init__(self, tex: str) -> None:
        self.tex = tex
        self.toks = _tokens(tex)
        self.at = 0

    def peek(self) -> str | None:
        return self.toks[self.at][0] if self.at < len(self.toks) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise UnknownLatex(f"{self.tex!r} ends early")
        self.at += 1
        return tok

    def expect(self, tok: str) -> None:
        got = self.take()
        if got != tok:
            raise UnknownLatex(f"expected {tok!r}, got {got!r} in {self.tex!r}")

    def row(self, stop: frozenset[str] = frozenset()) -> str:
        """Atoms up to a token of ``stop`` (or the end), as one <mrow>."""
        parts: list[str] = []
        while (tok := self.peek()) is not None and tok not in stop:
            if tok in "_^":
                self.take()
                base = parts.pop() if parts else "<mrow></mrow>"
                parts.append(self._script(base, tok))
            elif tok == "-" and self._sign(parts):
                self.take()  # a sign, not a minus between two terms: "(−1)", not "( − 1)"
                parts.append(f"<mrow><mo>−</mo>{self.atom()}</mrow>")
            else:
                parts.append(self.atom())
        return parts[0] if len(parts) == 1 else "<mrow>" + "".join(parts) + "</mrow>"

    def _sign(self, parts: list[str]) -> bool:
        """Whether the ``-`` at hand is a sign: first, or after an operator other than a
        closing bracket ("(−0.6) − 1" subtracts), and followed by something (a formula cut
        after a minus, :mod:`attnviz.classroom.web.render`, ends with it)."""
        if self.at + 1 >= len(self.toks):
            return False
        return not parts or (parts[-1].startswith("<mo") and parts[-1] not in CLOSING)

    def _script(self, base: str, first: str) -> str:
        one = self.atom()
        other = {"_": "^", "^": "_"}[first]
        if self.peek() == other:
            self.take()
            two = self.atom()
            sub, sup = (one, two) if first == "_" else (two, one)
            return f"<msubsup>{base}{sub}{sup}</msubsup>"
        tag = "msub" if first == "_" else "msup"
        return f"<{tag}>{base}{one}</{tag}>"

    def group(self) -> str:
        """``{...}`` as one <mrow>, or the next single atom."""
        if self.peek() == "{":
            self.take()
            inner = self.row(frozenset("}"))
            self.expect("}")
            return inner
        return self.atom()

    def raw_group(self) -> str:
        """The text of ``{...}`` as written (for ``\\mathrm``, ``\\text``, environments)."""
        self.expect("{")
        start = self.toks[self.at - 1][1]
        while self.take() != "}":
            pass
        return self.tex[start : self.toks[self.at - 1][1] - 1].strip()

    def atom(self) -> str:
        tok = self.take()
        if tok == "{":
            inner = self.row(frozenset("}"))
            self.expect("}")
            return inner
        if tok.startswith("\\"):
            return self._command(tok[1:])
        if tok[0].isdigit():
            return f"<mn>{tok.replace('{,}', ',')}</mn>"
        if tok.isalpha():
            return f"<mi>{_esc(tok)}</mi>"
        if tok in "}&":
            raise UnknownLatex(f"an unexpected {tok!r} in {self.tex!r}")
        return f"<mo>{_esc('−' if tok == '-' else tok)}</mo>"

    def _command(self, name: str) -> str:
        if name in SPACES:
            return f'<mspace width="{SPACES[name]}"></mspace>'
        if name == "frac":
            return f"<mfrac>{self.group()}{self.group()}</mfrac>"
        if name == "sqrt" and self.peek() == "{":
            return f"<msqrt>{self.group()}</msqrt>"
        if name in TEXT_COMMANDS:
            tag = TEXT_COMMANDS[name]
            variant = ' mathvariant="bold"' if name == "mathbf" else ""
            if tag == "mi" and not variant:
                variant = ' mathvariant="normal"'
            return f"<{tag}{variant}>{_esc(self.raw_group())}</{tag}>"
        if name == "begin":
            return self._matrix(self.raw_group())
        if name in ("left", "right"):
            return self.atom()  # the bracket itself
        if name in SYMBOLS:
            tag, text = SYMBOLS[name]
            return f"<{tag}>{_esc(text)}</{tag}>"
        raise UnknownLatex(f"the command \\{name} in {self.tex!r}")

    def _matrix(self, env: str) -> str:
        if env not in MATRICES:
            raise UnknownLatex(f"the environment {env!r} in {self.tex!r}")
        rows, cells = [], []
        while True:
            cells.append("<mtd>" + self.row(frozenset({"&", "\\\\", "\\end"})) + "</mtd>")
            tok = self.take()
            if tok == "&":
                continue
            rows.append("<mtr>" + "".join(cells) + "</mtr>")
            cells = []
            if tok == "\\end":
                if self.raw_group() != env:
                    raise UnknownLatex(f"\\begin{{{env}}} ends with another \\end in {self.tex!r}")
                break
        # The brackets are the table's own borders (the page's style sheet): a stretched
        # "[" needs a math font that many phones lack.
        return f'<mtable class="{env}">' + "".join(rows) + "</mtable>"


def to_mathml(tex: str, display: bool = False) -> str:
    """One formula as a ``<math>`` element (``display``: a block of its own)."""
    p = _Parser(tex)
    body = p.row()
    if p.peek() is not None:
        raise UnknownLatex(f"an unexpected {p.peek()!r} in {tex!r}")
    mode = "block" if display else "inline"
    return f'<math display="{mode}">{body}</math>'
