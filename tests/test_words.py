import io
import re
import tokenize
from pathlib import Path

from parbench.words import counted

ROOT = Path(__file__).resolve().parents[1]


def test_counted_writes_the_singular_only_for_one():
    assert counted(1, "time") == "1 time"
    assert counted(0, "time") == "0 times"
    assert counted(3, "timed run") == "3 timed runs"


def test_counted_takes_a_plural_an_s_does_not_make():
    assert counted(1, "launch", "launches") == "1 launch"
    assert counted(2, "launch", "launches") == "2 launches"


def _strings(path: Path):
    """(line, text) of every string literal in a Python file, an f-string's expressions
    left out."""
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if tok.type == tokenize.STRING:
            yield tok.start[0], re.sub(r"\{[^{}]*\}", "", tok.string)


def test_console_lines_write_counts_without_a_parenthesised_plural():
    # the count is known where a line is written: "3 builds", never "3 build(s)"
    found = [f"{p.relative_to(ROOT)}:{line}" for folder in ("src", "benchmarks")
             for p in sorted((ROOT / folder).rglob("*.py"))
             for line, text in _strings(p)
             if re.search(r"[a-z]\((s|es)\)", text) and '"""' not in text[:3] and "'''" not in text[:3]]
    assert not found, f"write the count with parbench.words.counted: {found}"


def test_the_check_finds_a_parenthesised_plural(tmp_path):
    source = tmp_path / "line.py"
    source.write_text('n = 2\nprint(f"{n} build(s) done")\nprint(len(n))\n')
    assert [line for line, text in _strings(source) if re.search(r"[a-z]\((s|es)\)", text)] == [2]
