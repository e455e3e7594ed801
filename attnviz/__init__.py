"""attnviz: self-attention, computed in NumPy and drawn for a lecture (docs/architecture.md).

The package's folders are its concepts, each with its modules listed in its own docstring:
``engine`` (the attention maths), ``models`` (real checkpoints in NumPy), ``toys`` (tiny
transformers trained in NumPy), ``teaching`` (presets, inputs, explanations, LaTeX),
``classroom`` (the live class: store, exercises, predictions, lessons, the student's page),
``viz`` (plotly figures), ``ui`` (Streamlit), ``i18n`` (the languages), ``cli`` and
``__main__`` (the ``attnviz`` command). Data beside them: ``locale/`` (the catalogs),
``toy_runs/`` (the toys' shipped runs).

The contract: a few modules moved into those folders keep the import paths that notebooks
and acceptance checks use. :data:`CONTRACT` is their one table (old name -> real module);
``import attnviz.explain``, ``from attnviz import explain`` and
``from attnviz.explain import cell`` give the real module itself (the same object, imported
when first asked for: ``import attnviz`` imports nothing else). Code inside the project
imports the real paths (tests/test_layout.py).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

#: Old import path -> the module that now holds it.
CONTRACT = {
    "attnviz.explain": "attnviz.teaching.explain",
    "attnviz.presets": "attnviz.teaching.presets",
    "attnviz.inputs": "attnviz.teaching.inputs",
    "attnviz.latex": "attnviz.teaching.latex",
    "attnviz.exercises": "attnviz.classroom.exercises",
    "attnviz.predict": "attnviz.classroom.predict",
}


class _ContractLoader(importlib.abc.Loader):
    """Loads an old path as the real module: the import system binds that very object."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(CONTRACT[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the real module ran when it was imported."""


class _ContractFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`CONTRACT`, and nothing else."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in CONTRACT:
            return None
        return importlib.machinery.ModuleSpec(fullname, _CONTRACT_LOADER)


_CONTRACT_LOADER = _ContractLoader()
if not any(isinstance(f, _ContractFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _ContractFinder())


def __getattr__(name: str) -> ModuleType:
    """``attnviz.explain`` before anything imported it (``from attnviz import explain``)."""
    if f"{__name__}.{name}" in CONTRACT:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
