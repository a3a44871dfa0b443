"""`parbench system-deps`: the studies' system packages are checked, a missing required
one stops `make` with the install command, an optional one is only announced."""

import argparse

from parbench import system_deps
from parbench.studies.base import SystemPackage

NEEDED = SystemPackage("nosuch-server", "nosuch-server-binary", "the study's server")
OPTIONAL = SystemPackage("libnosuch-dev", "/usr/include/nosuch.h", "a peer", required=False)


def run(monkeypatch, capsys, missing, install=False):
    monkeypatch.setattr(system_deps, "missing_packages", lambda: list(missing))
    monkeypatch.setenv(system_deps.NO_APT_ENV, "1")
    rc = system_deps.main(argparse.Namespace(install=install))
    return rc, capsys.readouterr().err


def test_presence_of_commands_and_files(tmp_path):
    assert system_deps.present("sh") and not system_deps.present("nosuch-server-binary")
    (tmp_path / "x.h").write_text("")
    assert system_deps.present(str(tmp_path / "x.h")) and not system_deps.present(str(tmp_path / "y.h"))


def test_a_missing_required_package_fails_with_the_install_command(monkeypatch, capsys):
    rc, err = run(monkeypatch, capsys, [("demo", NEEDED), ("demo", OPTIONAL)], install=True)
    assert rc == 1
    assert "demo needs nosuch-server (the study's server)" in err
    assert "demo can use libnosuch-dev (a peer)" in err
    assert "sudo apt-get install libnosuch-dev nosuch-server" in err
    assert "not installing system packages (PARBENCH_NO_APT is set)" in err


def test_a_missing_optional_package_is_only_announced(monkeypatch, capsys):
    rc, err = run(monkeypatch, capsys, [("demo", OPTIONAL)])
    assert rc == 0 and "can use libnosuch-dev" in err


def test_nothing_missing_is_silent(monkeypatch, capsys):
    assert run(monkeypatch, capsys, []) == (0, "")


def test_apt_is_used_only_when_allowed(monkeypatch):
    monkeypatch.setenv(system_deps.NO_APT_ENV, "1")
    assert system_deps.can_install() == (False, "PARBENCH_NO_APT is set")
