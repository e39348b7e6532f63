"""Everything about a provider comes from its registry row: the fakes `websearch.testing` exports,
the README's provider list, and no hand-kept count of providers anywhere."""

from __future__ import annotations

import re
from pathlib import Path

import websearch.testing
from websearch._core._registry import PROVIDERS
from websearch._engine._capabilities import PROVIDERS_END, PROVIDERS_START, provider_list, with_provider_list

ROOT = Path(__file__).resolve().parent.parent
_NUMBER = (
    r"(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|thirty|forty)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?"
)
#: A number word counting providers or engines ("twenty-four search providers", "seven keyless
#: engines"): such a count goes stale with the next row.
COUNT_WORDS = re.compile(
    rf"\b{_NUMBER}\s+(?:(?:keyless|search|answer|html|built-in|credentialed|web|other|more)\s+)*"
    r"(?:providers|engines|scrapers|backends)\b",
    re.IGNORECASE,
)


def _texts() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "pyproject.toml", *sorted((ROOT / "docs").rglob("*.md"))]
    return files + sorted((ROOT / "src").rglob("*.py"))


def test_websearch_testing_exports_every_rows_fake() -> None:
    exported: dict[str, object] = {}
    exec("from websearch.testing import *", exported)  # what `import *` gives is `__all__`
    for row in PROVIDERS.values():
        name = row.fake.rpartition(":")[2]
        assert name in websearch.testing.__all__, f"{row.id}: {name} is not exported"
        assert exported[name] is websearch.testing.FAKES[row.id]


def test_readme_provider_list_is_the_generated_one() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert PROVIDERS_START in readme and PROVIDERS_END in readme
    assert readme == with_provider_list(readme), (
        "README.md's provider list is out of date: run `python -m websearch._engine._capabilities --readme README.md`"
    )
    listed = " ".join(provider_list().split())
    assert all(row.label in listed for row in PROVIDERS.values())


def test_no_count_of_providers_is_written_anywhere() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)!r}"
        for path in _texts()
        for match in COUNT_WORDS.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "say 'every provider' or generate the list from the registry instead"


def test_the_count_words_pattern_finds_the_counts_that_drifted() -> None:
    drifted = "over twenty-four search providers; seven keyless engines; eighteen providers; Six HTML engines"
    assert len(COUNT_WORDS.findall(drifted)) == 4
    assert COUNT_WORDS.findall("one search, two of them failed, every provider, 2 of 7 providers") == []
