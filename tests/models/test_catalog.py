"""find() over a fake hub cache and ATTNVIZ_MODELS folders, and load(): one model per
folder and process, path tricks and links out of the listed folders refused."""

from __future__ import annotations

import hashlib
import shutil
import threading
from pathlib import Path

import pytest

from attnviz import models
from attnviz.models import catalog


def hub_repo(hub: Path, repo: str, revs: dict[str, Path]) -> None:
    """models--org--name with one snapshot per revision, files symlinked to blobs/."""
    top = hub / ("models--" + repo.replace("/", "--"))
    (top / "blobs").mkdir(parents=True, exist_ok=True)
    for rev, src in revs.items():
        snap = top / "snapshots" / rev
        snap.mkdir(parents=True)
        for f in src.iterdir():
            blob = top / "blobs" / hashlib.sha256(f.read_bytes()).hexdigest()
            if not blob.exists():
                shutil.copy(f, blob)
            (snap / f.name).symlink_to(Path("../../blobs") / blob.name)


@pytest.fixture
def disk(tiny_checkpoint, tmp_path, monkeypatch):
    """A hub cache (two repos, one with two revisions, a broken one, one linking outside)
    and two ATTNVIZ_MODELS folders."""
    llama, bert = tiny_checkpoint("llama"), tiny_checkpoint("bert")
    hub = tmp_path / "hub"
    hub_repo(hub, "org/llama", {"a" * 40: llama})
    hub_repo(hub, "org/bert", {"1" * 40: bert, "2" * 40: bert})
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "llama"}')
    hub_repo(hub, "org/broken", {"b" * 40: broken})
    evil = hub / "models--org--evil" / "snapshots" / ("e" * 40)
    evil.mkdir(parents=True)
    (evil / "config.json").symlink_to(llama / "config.json")  # outside the hub
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(llama, one / "my-llama")
    shutil.copytree(bert, two / "my-bert")
    (two / "link-out").symlink_to(llama, target_is_directory=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("ATTNVIZ_MODELS", f"{one}:{two}")
    catalog.clear()
    yield tmp_path
    catalog.clear()


def test_find_lists_the_hub_cache_and_the_folders(disk):
    found, skipped = catalog.scan()
    names = {e.name: e for e in found}
    assert set(names) == {"org/llama", f"org/bert@{'1' * 12}", f"org/bert@{'2' * 12}",
                          "my-llama", "my-bert"}  # fmt: skip
    llama = names["org/llama"]
    assert (llama.family, llama.kind, llama.too_large) == ("llama", "decoder", False)
    assert llama.bytes == 4 * llama.params and llama.params == names["my-llama"].params
    assert names["my-bert"].kind == "encoder"
    reasons = {s.path.name if s.path.name != "b" * 40 else "broken": s.reason for s in skipped}
    assert "no *.safetensors" in reasons["broken"]
    assert "points outside" in reasons["e" * 40] and "points outside" in reasons["link-out"]
    assert [e.name for e in models.find()] == [e.name for e in found]


def test_find_in_given_dirs_only(disk):
    assert [e.name for e in models.find([disk / "two"])] == ["my-bert"]
    assert {e.name for e in models.find([disk / "hub", disk / "one"])} >= {"org/llama", "my-llama"}
    assert models.find([disk / "nowhere"]) == []


def test_too_large_is_flagged_and_refused(disk, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODEL_MAX_GB", "0.00001")
    entry = next(e for e in models.find() if e.name == "my-llama")
    assert entry.too_large
    with pytest.raises(ValueError, match="over the limit"):
        models.load(entry)


def test_load_once_per_folder(disk):
    entry = next(e for e in models.find() if e.name == "org/llama")
    model = models.load(entry)
    assert models.load(entry) is model and models.load(str(entry.path)) is model
    assert (model.family, model.kind) == ("llama", "decoder")
    tokens, ids = model.tokenize("w5 w6 w7")
    assert tokens == ["w5", "w6", "w7"] and model.run_ids(ids).attentions.shape == (2, 4, 3, 3)


def test_threads_loading_one_model_get_one_model(disk):
    entry = next(e for e in models.find() if e.name == "my-bert")
    got = []
    threads = [threading.Thread(target=lambda: got.append(models.load(entry))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(m is got[0] for m in got)


def test_a_link_out_is_refused_even_when_its_target_was_loaded_first(disk):
    """The cache does not skip the path's rule: two/link-out points at a folder outside
    ATTNVIZ_MODELS, which loads by its own path, and is still refused through the link."""
    target = (disk / "two" / "link-out").resolve()
    assert models.load(target) is not None  # loaded by its own path (not under a list)
    with pytest.raises(ValueError, match="points outside"):
        models.load(disk / "two" / "link-out")


def test_path_tricks_are_refused(disk):
    with pytest.raises(ValueError, match=r"may not contain '\.\.'"):
        models.load(disk / "one" / "my-llama" / ".." / ".." / "etc")
    with pytest.raises(ValueError, match="points outside"):
        models.load(disk / "two" / "link-out" / ".")
