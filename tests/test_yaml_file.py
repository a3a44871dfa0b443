"""YAML read one way: the C loader where there is one, the same documents as PyYAML's safe loader."""

import pytest
import yaml

from parbench import yaml_file

DOC = "a: 1\nb: [x, 2.5, null, true]\nc:\n  d: '07'\n"


def test_reads_what_the_safe_loader_reads(tmp_path):
    path = tmp_path / "doc.yaml"
    path.write_text(DOC)
    assert yaml_file.read(path) == yaml.safe_load(DOC)


def test_each_read_is_a_fresh_object(tmp_path):
    path = tmp_path / "doc.yaml"
    path.write_text(DOC)
    first = yaml_file.read(path)
    first["a"] = 2
    assert yaml_file.read(path)["a"] == 1


def test_an_empty_file_is_none(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("")
    assert yaml_file.read(path) is None


def test_refuses_what_the_safe_loader_refuses(tmp_path):
    path = tmp_path / "object.yaml"
    path.write_text("!!python/object:os.system {}\n")
    with pytest.raises(yaml.YAMLError):
        yaml_file.read(path)


def test_uses_libyaml_where_pyyaml_has_it():
    expected = yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader
    assert yaml_file.SAFE_LOADER is expected
