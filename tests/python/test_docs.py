"""docs/python.md's examples run as written: its ```python blocks, in order, in one namespace,
from the repository root, with their shown output compared (doctest; `...` elides)."""

import doctest
import re

from conftest import ROOT

DOC = ROOT / "docs" / "python.md"


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The ```python blocks of a markdown text, with the line each starts on."""
    blocks = []
    for m in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        blocks.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return blocks


def test_python_md_examples_print_what_the_doc_shows(monkeypatch):
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) == 1, "docs/python.md's python blocks (a new one? count it here)"
    monkeypatch.chdir(ROOT)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    namespace: dict = {}
    examples = 0
    for line, source in blocks:
        test = parser.get_doctest(source, namespace, "docs/python.md", str(DOC), line - 1)
        assert test.examples, f"docs/python.md:{line}: a python block without `>>>` examples"
        examples += len(test.examples)
        runner.run(test, clear_globs=False)
        namespace = test.globs  # DocTest copies its globs: the next block continues here
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {examples} docs/python.md examples differ (above)"
    assert result.attempted == examples == 7
