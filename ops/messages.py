"""The translations' catalogs: extract the texts from the code, compile them, check them.

    python -m ops.messages extract   # the code's texts into locale/<domain>.pot and every .po
    python -m ops.messages compile   # every .po into the .mo files Django reads
    python -m ops.messages check     # exit 1 if a .po misses a text, is stale or breaks one

Two domains, as Django names them: ``django`` (every text the server answers or sends, marked
with gettext in the Python code) and ``djangojs`` (the browser table's, marked with ``t(...)``
in web/static/web). Babel does the reading and writing of the gettext files, so neither needs
GNU gettext on the machine: ``make install`` and the image build compile with this module alone.
A text's placeholders (``%(name)s``, ``{name}``) must be the same in every language; ``check``
says where they are not.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE_DIR = ROOT / "tongits_site" / "locale"
#: The players' languages besides English (settings.LANGUAGES), each with a catalog.
LANGUAGES = ("fil", "es", "vi", "tr", "ar")

PYTHON_PACKAGES = (
    "accounts",
    "chat",
    "chips",
    "core",
    "fairplay",
    "games",
    "matchmaking",
    "metrics",
    "notifications",
    "ops",
    "runtime",
    "social",
    "store",
    "tongits_site",
    "tournaments",
    "web",
)
PYTHON_KEYWORDS = {
    "_": None,
    "gettext": None,
    "gettext_lazy": None,
    "gettext_noop": None,
    "ngettext": (1, 2),
    "ngettext_lazy": (1, 2),
    "pgettext": ((1, "c"), 2),
    "pgettext_lazy": ((1, "c"), 2),
}
#: The browser table marks its texts t("...") and tn("one", "many", n).
JS_KEYWORDS = {"t": None, "tn": (1, 2)}


@dataclass(frozen=True)
class Domain:
    name: str
    sources: tuple[Path, ...]
    method: str
    keywords: dict


DOMAINS = (
    Domain("django", tuple(ROOT / p for p in PYTHON_PACKAGES), "python", PYTHON_KEYWORDS),
    Domain("djangojs", (ROOT / "web" / "static" / "web",), "javascript", JS_KEYWORDS),
)

_SKIPPED = re.compile(r"(^|/)(migrations|tests|static)(/|$)")
_PLACEHOLDER = re.compile(r"%\((\w+)\)[sdif]|\{(\w*)\}")


def po_path(domain: str, language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po"


def _extracted(domain: Domain) -> Iterator[tuple[str, int, object, list[str], str | None]]:
    pattern = "**.py" if domain.method == "python" else "**.js"
    for source in domain.sources:
        for filename, lineno, message, comments, context in extract_from_dir(
            source,
            method_map=[(pattern, domain.method)],
            keywords=domain.keywords,
            comment_tags=("Translators:",),
            strip_comment_tags=True,
        ):
            if domain.method == "python" and _SKIPPED.search(filename):
                continue
            where = (source.relative_to(ROOT) / filename).as_posix()
            yield where, lineno, message, comments, context


def template(domain: Domain) -> Catalog:
    """Every text the code marks in ``domain``, as a catalog with no translations."""
    catalog = Catalog(project="tongits-server", domain=domain.name, fuzzy=False)
    for where, _lineno, message, comments, context in _extracted(domain):
        catalog.add(message, None, [(where, None)], auto_comments=comments, context=context)
    return catalog


def _read(path: Path, language: str) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle, locale=language)


def _write(path: Path, catalog: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, catalog, width=100, sort_output=True, include_lineno=False)


def extract() -> None:
    """Write each domain's template and bring every language's catalog up to it (new texts
    untranslated, texts no longer in the code dropped)."""
    for domain in DOMAINS:
        pot = template(domain)
        _write(LOCALE_DIR / f"{domain.name}.pot", pot)
        for language in LANGUAGES:
            path = po_path(domain.name, language)
            catalog = (
                _read(path, language)
                if path.exists()
                else Catalog(locale=language, domain=domain.name, project="tongits-server")
            )
            catalog.update(pot, no_fuzzy_matching=True)
            catalog.obsolete.clear()
            catalog.fuzzy = False  # the header: the catalog is the project's, not a draft
            _write(path, catalog)


def compile_all() -> int:
    """Every language's catalogs as .mo files beside them; the number written."""
    written = 0
    for domain in DOMAINS:
        for language in LANGUAGES:
            path = po_path(domain.name, language)
            if not path.exists():
                continue
            catalog = _read(path, language)
            with path.with_suffix(".mo").open("wb") as handle:
                write_mo(handle, catalog, use_fuzzy=False)
            written += 1
    return written


def placeholders(text: str) -> list[str]:
    """The named placeholders of a text, sorted (``%(n)s`` and ``{n}`` alike)."""
    return sorted(a or b for a, b in _PLACEHOLDER.findall(text))


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, tuple | list):
        return tuple(str(v) for v in value)
    return (str(value),) if value else ()


def problems() -> list[str]:
    """What keeps the catalogs from being complete and true to the code, one line each."""
    found: list[str] = []
    for domain in DOMAINS:
        wanted = {(m.id if isinstance(m.id, str) else m.id[0], m.context) for m in template(domain)}
        wanted.discard(("", None))
        for language in LANGUAGES:
            path = po_path(domain.name, language)
            if not path.exists():
                found.append(f"{path.relative_to(ROOT)}: missing")
                continue
            catalog = _read(path, language)
            have = {}
            for message in catalog:
                if not message.id:
                    continue
                key = message.id if isinstance(message.id, str) else message.id[0]
                have[(key, message.context)] = message
            for key in sorted(wanted - have.keys(), key=str):
                found.append(f"{path.relative_to(ROOT)}: no entry for {key[0]!r}")
            for key in sorted(have.keys() - wanted, key=str):
                found.append(f"{path.relative_to(ROOT)}: {key[0]!r} is no longer in the code")
            for key in sorted(wanted & have.keys(), key=str):
                message = have[key]
                texts = _strings(message.string)
                if message.fuzzy or not texts or not all(t.strip() for t in texts):
                    found.append(f"{path.relative_to(ROOT)}: {key[0]!r} is not translated")
                    continue
                ids = _strings(message.id)
                expected = placeholders(ids[-1])
                for text in texts:
                    if placeholders(text) != expected:
                        found.append(
                            f"{path.relative_to(ROOT)}: {key[0]!r} has placeholders "
                            f"{placeholders(text)}, the English {expected}"
                        )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ops.messages", description=__doc__)
    parser.add_argument("action", choices=["extract", "compile", "check"])
    args = parser.parse_args(argv)
    if args.action == "extract":
        extract()
        return 0
    if args.action == "compile":
        print(f"messages: {compile_all()} catalogs compiled")
        return 0
    found = problems()
    for line in found:
        print(line)
    print(f"messages: {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
