"""The model families attnviz runs, one table: which module builds which ``model_type``.

Each family module (a table entry) has::

    KIND: str                     # "encoder" | "decoder" | "encoder-decoder"
    FAMILIES: tuple[str, ...]     # the config.json ``model_type``s it handles
    def build(config: dict, weights: Mapping[str, np.ndarray], tokenizer_path: Path | None)

``weights`` are the checkpoint's tensors by their Hugging Face names, float32
(:class:`attnviz.models.checkpoint.Weights`). A module of the table that is not there (the
encoder-decoders are written on their own branch) is left out; nothing else names a family.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

from attnviz.models.checkpoint import Checkpoint, CheckpointError

__all__ = ["KINDS", "MODULES", "build", "kind_of", "module_for", "supported"]

#: The family modules, in the order their model types are listed.
MODULES = (
    "attnviz.models.encoder",  # bert, roberta, distilbert
    "attnviz.models.gpt2",  # gpt2
    "attnviz.models.llama",  # llama, mistral, qwen2, qwen3
    "attnviz.models.gemma3",  # gemma3_text, gemma3
    "attnviz.models.t5",  # t5 (and its kin), when present
    "attnviz.models.bart",  # bart, marian, when present
)
KINDS = ("encoder", "decoder", "encoder-decoder")


@functools.cache
def _table() -> dict[str, ModuleType]:
    """model_type -> the module that builds it (modules not present left out)."""
    out: dict[str, ModuleType] = {}
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # the module is there but needs something missing
                raise
            continue
        if module.KIND not in KINDS:
            raise ValueError(f"{name}.KIND must be one of {KINDS}, got {module.KIND!r}")
        for model_type in module.FAMILIES:
            out.setdefault(model_type, module)
    return out


def supported() -> list[str]:
    """The model types attnviz can run, sorted."""
    return sorted(_table())


def module_for(model_type: str, where: Path | str = "config.json") -> ModuleType:
    """The family module of ``model_type``; CheckpointError naming the supported ones."""
    module = _table().get(model_type)
    if module is None:
        raise CheckpointError(
            f"{where}: model_type {model_type!r} is not supported; attnviz runs "
            f"{', '.join(supported())}"
        )
    return module


def kind_of(model_type: str, where: Path | str = "config.json") -> str:
    """ "encoder", "decoder" or "encoder-decoder"."""
    return str(module_for(model_type, where).KIND)


def build(ckpt: Checkpoint) -> Any:
    """The model of a checkpoint (size checked first, then the weights read)."""
    module = module_for(ckpt.model_type, ckpt.folder / "config.json")
    return module.build(ckpt.config, ckpt.weights(), ckpt.tokenizer)
