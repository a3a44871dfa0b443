"""`parbench system-deps`: the studies' system packages are checked by what they provide
(a command that runs, a header the compiler finds), a missing required one stops `make`
with the platform's install command (apt-get on Debian, brew on macOS), an optional one
is only announced; the Brewfile lists every formula the studies name."""

import argparse
import re
import shutil
from pathlib import Path

import pytest

from parbench import studies, system_deps
from parbench.studies.base import Command, Header, SystemPackage

REPO = Path(__file__).resolve().parents[1]
NEEDED = SystemPackage("nosuch-server", Command("nosuch-server-binary"), "the study's server", brew="nosuch")
OPTIONAL = SystemPackage("libnosuch-dev", Header("nosuch/nosuch.h"), "a peer", required=False, brew="libnosuch")
LINUX_ONLY = SystemPackage("xnosuch", Command("xnosuch"), "a Linux-only test tool", required=False)
BREW_ONLY = SystemPackage(None, Header("nosuch_omp.h"), "a runtime gcc brings", required=False, brew="libnosuch-omp")

needs_cc = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on PATH")


def run(monkeypatch, capsys, missing, install=False, manager="apt"):
    monkeypatch.setattr(system_deps, "missing_packages", lambda manager: list(missing))
    monkeypatch.setenv(system_deps.NO_APT_ENV, "1")
    rc = system_deps.main(argparse.Namespace(install=install), manager=manager)
    return rc, capsys.readouterr().err


def test_a_command_counts_when_it_is_on_path_and_runs():
    assert system_deps.command_works(Command("sh"))
    assert not system_deps.command_works(Command("nosuch-server-binary"))
    assert system_deps.command_works(Command("sh", ("-c", "exit 0")))
    # a stub that is on PATH but fails (macOS's /usr/bin/javac without a JDK)
    assert not system_deps.command_works(Command("sh", ("-c", "exit 1")))


@needs_cc
def test_a_header_counts_when_the_compiler_finds_it(tmp_path):
    assert system_deps.header_found(Header("stdio.h"))
    assert not system_deps.header_found(Header("nosuch/nosuch.h"))
    (tmp_path / "nosuch").mkdir()
    (tmp_path / "nosuch" / "nosuch.h").write_text("#define NOSUCH 1\n")
    assert system_deps.header_found(Header("nosuch/nosuch.h"), [str(tmp_path)])


@needs_cc
def test_on_macos_a_header_is_looked_for_under_the_formulas_brew_prefix(monkeypatch, tmp_path):
    (tmp_path / "include" / "nosuch").mkdir(parents=True)
    (tmp_path / "include" / "nosuch" / "nosuch.h").write_text("")
    asked = []
    monkeypatch.setattr(system_deps, "brew_prefix", lambda formula: asked.append(formula) or str(tmp_path))
    assert system_deps.present(OPTIONAL, "brew") and asked == ["libnosuch"]
    # apt: the compiler's own search path only, never a Homebrew folder
    assert not system_deps.present(OPTIONAL, "apt")


def test_the_package_manager_follows_the_platform():
    assert system_deps.package_manager("Darwin", which=lambda name: None) == "brew"
    assert system_deps.package_manager("Linux", which=lambda name: "/usr/bin/apt-get") == "apt"
    assert system_deps.package_manager("Linux", which=lambda name: None) == "none"
    assert system_deps.package_manager("FreeBSD", which=lambda name: None) == "none"


def test_only_packages_with_a_name_on_the_platform_are_checked():
    assert system_deps.relevant(LINUX_ONLY, "apt") and not system_deps.relevant(LINUX_ONLY, "brew")
    assert system_deps.relevant(BREW_ONLY, "brew") and not system_deps.relevant(BREW_ONLY, "apt")
    assert system_deps.relevant(NEEDED, "none") and not system_deps.relevant(BREW_ONLY, "none")


def test_a_missing_required_package_fails_with_the_install_command(monkeypatch, capsys):
    rc, err = run(monkeypatch, capsys, [("demo", NEEDED), ("demo", OPTIONAL)], install=True)
    assert rc == 1
    assert "demo needs nosuch-server (the study's server)" in err
    assert "demo can use libnosuch-dev (a peer)" in err
    assert "sudo apt-get install libnosuch-dev nosuch-server" in err
    assert "not installing system packages (PARBENCH_NO_APT is set)" in err


def test_on_macos_the_brew_line_is_printed_and_brew_never_run(monkeypatch, capsys):
    monkeypatch.setattr(system_deps, "install", lambda names: pytest.fail("apt-get on macOS"))
    rc, err = run(monkeypatch, capsys, [("demo", NEEDED), ("demo", OPTIONAL)], install=True, manager="brew")
    assert rc == 1
    assert "demo needs nosuch (the study's server)" in err and "demo can use libnosuch (a peer)" in err
    assert "brew install libnosuch nosuch" in err and "brew bundle" in err
    assert "apt-get" not in err and "not installing" not in err
    assert system_deps.can_install("brew")[0] is False


def test_without_homebrew_the_message_says_where_to_get_it():
    line = system_deps.install_hint(["tbb"], "brew", which=lambda name: None)
    assert "brew install tbb" in line and "https://brew.sh" in line
    assert "brew.sh" not in system_deps.install_hint(["tbb"], "brew", which=lambda name: "/opt/homebrew/bin/brew")


def test_elsewhere_the_debian_names_are_given_to_translate(monkeypatch, capsys):
    rc, err = run(monkeypatch, capsys, [("demo", OPTIONAL)], manager="none")
    assert rc == 0 and "equivalents of the Debian packages: libnosuch-dev" in err


def test_a_missing_optional_package_is_only_announced(monkeypatch, capsys):
    rc, err = run(monkeypatch, capsys, [("demo", OPTIONAL)])
    assert rc == 0 and "can use libnosuch-dev" in err


def test_nothing_missing_is_silent(monkeypatch, capsys):
    assert run(monkeypatch, capsys, []) == (0, "")


def test_apt_is_used_only_when_allowed(monkeypatch):
    monkeypatch.setenv(system_deps.NO_APT_ENV, "1")
    assert system_deps.can_install() == (False, "PARBENCH_NO_APT is set")


def test_the_brewfile_lists_every_formula_the_studies_name():
    brewfile = (REPO / "Brewfile").read_text()
    listed = set(re.findall(r'^brew "([^"]+)"', brewfile, re.MULTILINE))
    named = {p.brew for study in studies.registered() for p in study.system_packages if p.brew}
    assert named and named <= listed, f"missing from the Brewfile: {sorted(named - listed)}"
    # what the Makefiles look for under brew --prefix is there too
    assert {"openssl@3", "libomp", "tbb", "sdl2"} <= listed


def test_every_study_package_is_checked_by_what_it_provides():
    for study in studies.registered():
        for package in study.system_packages:
            assert isinstance(package.provides, (Command, Header)), (study.name, package)
            assert package.debian or package.brew, (study.name, package)
            if isinstance(package.provides, Header):
                assert not package.provides.path.startswith("/"), "a header as the compiler names it"
