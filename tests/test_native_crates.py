"""Sources vendored in Rust crates (parbench.native.crates): found in cargo's registry,
fetched when missing, unpacked from cargo's verified archive when only that is there."""

import io
import tarfile

import pytest

from parbench.native import crates


class Failed(RuntimeError):
    pass


def _archive(path, crate, marker):
    """A .crate archive as cargo keeps it: a gzipped tar of `<crate>/...`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        data = b"source\n"
        info = tarfile.TarInfo(f"{crate}/{marker}")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def test_a_crate_only_in_cargos_cache_is_unpacked_after_the_fetch(tmp_path, monkeypatch):
    monkeypatch.setenv("CARGO_HOME", str(tmp_path))
    monkeypatch.setattr(crates.shutil, "which", lambda name: "/usr/bin/cargo")
    ran = []
    _archive(tmp_path / "registry" / "cache" / "index-1" / "foo-src-1.0.crate", "foo-src-1.0", "foo/Configure")
    found = crates.vendored_source("foo-src-1.0", "foo/Configure", tmp_path / "Cargo.toml", ran.append, Failed,
                                   "no cargo")
    assert found == tmp_path / "registry" / "src" / "index-1" / "foo-src-1.0" / "foo"
    assert (found / "Configure").read_text() == "source\n"
    assert ran and ran[0][:2] == ["/usr/bin/cargo", "fetch"] and "--locked" in ran[0]
    # found in the registry now: no second fetch
    assert crates.vendored_source("foo-src-1.0", "foo/Configure", tmp_path / "Cargo.toml", ran.append, Failed,
                                  "no cargo") == found
    assert len(ran) == 1


def test_no_cargo_and_no_source_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CARGO_HOME", str(tmp_path))
    monkeypatch.setattr(crates.shutil, "which", lambda name: None)
    with pytest.raises(Failed, match="install cargo"):
        crates.vendored_source("foo-src-1.0", "foo/Configure", tmp_path / "Cargo.toml", lambda cmd: None, Failed,
                               "building foo needs cargo: install cargo")


def test_a_fetch_that_brings_nothing_names_the_crate(tmp_path, monkeypatch):
    monkeypatch.setenv("CARGO_HOME", str(tmp_path))
    monkeypatch.setattr(crates.shutil, "which", lambda name: "/usr/bin/cargo")
    with pytest.raises(Failed, match="foo-src-1.0.crate"):
        crates.vendored_source("foo-src-1.0", "foo/Configure", tmp_path / "Cargo.toml", lambda cmd: None, Failed,
                               "no cargo")
