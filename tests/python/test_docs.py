"""Every code sample in README.md and docs/*.md runs, as a doctest, against the installed package.

A ```python block must be written as a doctest (``>>>`` prompts with the expected output), so that
its output is checked, not just that it runs; ```console blocks that call ``ebssim`` are checked by
the CLI and example tests.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_python_samples_are_doctests(path: Path) -> None:
    for block in _python_blocks(path.read_text()):
        assert block.lstrip().startswith(">>>"), f"{path.name}: a python sample is not a doctest:\n{block[:200]}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_doc_samples_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # samples that write files write them here
    text = path.read_text()
    # The blocks of one file share their names, as a reader running them in order would.
    globs: dict[str, object] = {"__name__": path.stem}
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    parser = doctest.DocTestParser()
    for block in _python_blocks(text):
        line = text[: text.index(block)].count("\n")
        test = parser.get_doctest(block, globs, path.name, str(path), line)
        runner.run(test, clear_globs=False)
        globs.update(test.globs)  # get_doctest ran the block on a copy
    assert runner.failures == 0, f"{runner.failures} sample(s) in {path.name} failed (see the output above)"


def test_readme_has_samples() -> None:
    assert len(_python_blocks((REPO / "README.md").read_text())) >= 1


def _matches_in_order(expected: list[str], got: list[str]) -> list[str]:
    """The expected lines (``...`` elides text) that do not match got's lines in order."""
    checker = doctest.OutputChecker()
    missing, i = [], 0
    for want in expected:
        while i < len(got) and not checker.check_output(want + "\n", got[i] + "\n", FLAGS):
            i += 1
        if i == len(got):
            missing.append(want)
        else:
            i += 1
    return missing


def test_readme_demo_output_is_what_make_demo_prints(tmp_path: Path) -> None:
    text = (REPO / "README.md").read_text()
    block = re.search(r"`make demo` prints:\n\n```\n(.*?)^```", text, flags=re.S | re.M)
    assert block, "README no longer shows what make demo prints"
    import subprocess
    import sys

    script = REPO / "examples" / "gp2_vs_gp3_cliff.py"
    out = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert block.group(1) == out
    assert (tmp_path / "out" / "gp2_vs_gp3_cliff.png").is_file()


def test_readme_console_commands(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``$ ebssim ...`` shown in README.md prints what the README says (``...`` elides)."""
    import shlex

    from ebssim.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").symlink_to(REPO / "tests")  # commands that read the repository's fixtures
    (tmp_path / "examples").symlink_to(REPO / "examples")  # and its example plans
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"^```console\n(.*?)^```", text, flags=re.S | re.M)
    checked = 0
    for block in blocks:
        m = re.match(r"\$ (.*?(?<!\\)\n)(.*)", block, flags=re.S)
        if m is None:
            continue
        cmd, expected = m.groups()
        if not cmd.startswith("ebssim "):
            continue
        argv = shlex.split(cmd.replace("\\\n", " "))[1:]
        assert main(argv) == 0
        got = capsys.readouterr().out.splitlines()
        missing = _matches_in_order([ln.rstrip() for ln in expected.splitlines()], got)
        assert not missing, f"README's `{argv[0]}` output no longer matches; missing:\n" + "\n".join(missing)
        checked += 1
    assert checked >= 1
