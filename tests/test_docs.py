"""The facts the documentation repeats from the code, checked against the code.

* README.md's command table lists exactly the ``cuberobot`` commands the CLI's parser has
  (``robot.cli.build_parser()``; nested commands as ``vision calibrate``).
* docs/daemon.md's command verbs are the verbs ``robot.commands.VERBS`` accepts, and its MQTT
  topics are the topics ``robot/mqtt.py`` builds with ``config.topic(...)`` (read from the
  source, a name argument such as ``verb`` standing for one topic level).
* Every relative link in README.md and docs/*.md points to a file that exists and, into a
  Markdown file, to a heading that file has.

:func:`doc_table` reads the table under a heading; its first column's code span is the key.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import pkgutil
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
DAEMON_DOC = DOCS / "daemon.md"

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _prose(text: str) -> Iterator[str]:
    """The lines of a Markdown text outside fenced code blocks."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def _section(path: Path, heading: str) -> list[str]:
    """The prose lines under ``heading`` (e.g. ``"### Error codes"``) up to the next heading."""
    lines: list[str] | None = None
    for line in _prose(path.read_text(encoding="utf-8")):
        if _HEADING.match(line):
            if lines is not None:
                break
            if line.strip() == heading:
                lines = []
        elif lines is not None:
            lines.append(line)
    assert lines is not None, f"{path.name} has no heading {heading!r}"
    return lines


def doc_table(path: Path, heading: str) -> list[list[str]]:
    """The body rows (cells stripped) of the first table under ``heading`` in ``path``."""
    rows = [line.strip() for line in _section(path, heading) if line.strip().startswith("|")]
    assert len(rows) > 2, f"{path.name}, {heading!r}: no table with rows"
    cells = [[c.strip() for c in _CELL_SPLIT.split(row.strip("|"))] for row in rows]
    return cells[2:]  # past the header and the --- line


def doc_keys(path: Path, heading: str) -> list[str]:
    """The code span of each row's first cell in the table under ``heading``."""
    keys = []
    for row in doc_table(path, heading):
        match = _CODE_SPAN.search(row[0])
        assert match, f"{path.name}, {heading!r}: row {row} has no `key` in its first cell"
        keys.append(match.group(1))
    return keys


# --- the command line -------------------------------------------------------------------------


def _build_parser() -> argparse.ArgumentParser:
    """``build_parser()`` of ``robot.cli`` (a module today; in a package it may live in one of
    the package's modules, which are searched in turn)."""
    cli = importlib.import_module("robot.cli")
    build: Callable[[], object] | None = getattr(cli, "build_parser", None)
    modules = [] if build is not None else pkgutil.iter_modules(getattr(cli, "__path__", []))
    for info in modules:
        build = getattr(importlib.import_module(f"robot.cli.{info.name}"), "build_parser", None)
        if build is not None:
            break
    assert build is not None, "robot.cli has no build_parser(): the CLI test needs one"
    parser = build()
    assert isinstance(parser, argparse.ArgumentParser)
    return parser


def _command_paths(parser: argparse.ArgumentParser, prefix: str = "") -> set[str]:
    """Every command a user can run: ``apply``, ``vision calibrate``, ``config check``..."""
    found: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = f"{prefix}{name}"
                found |= _command_paths(sub, path + " ") or {path}
    return found


def test_readme_command_table_is_the_cli() -> None:
    documented = doc_keys(README, "## Commands")
    assert all(k.startswith("cuberobot ") for k in documented), documented
    names = [k.removeprefix("cuberobot ") for k in documented]
    assert len(names) == len(set(names)), f"a command is listed twice: {names}"
    actual = _command_paths(_build_parser())
    assert set(names) == actual, (
        f"README.md's command table: missing {sorted(actual - set(names))}, "
        f"not in the CLI {sorted(set(names) - actual)}"
    )


def test_readme_shows_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make demo" in text and "make test" in text


# --- the daemon's MQTT interface --------------------------------------------------------------


def test_command_verbs_table_is_robot_commands() -> None:
    from robot.commands import VERBS

    documented = doc_keys(DAEMON_DOC, "### Command verbs")
    assert len(documented) == len(set(documented)), f"a verb is listed twice: {documented}"
    assert set(documented) == set(VERBS), (
        f"docs/daemon.md's verbs: missing {sorted(set(VERBS) - set(documented))}, "
        f"not in robot.commands.VERBS {sorted(set(documented) - set(VERBS))}"
    )


def _placeholder(node: ast.expr) -> str:
    """One topic level: a string literal as written, anything else (a name) as ``+``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return "+"


def _code_topics(source: str) -> set[str]:
    """The topics under the robot's base that ``source`` builds with ``<config>.topic(...)``;
    ``topic("cmd") + "/"`` (a prefix that incoming topics are matched against) counts as
    ``cmd/+``."""
    tree = ast.parse(source)
    prefixed = {
        id(node.left)
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and isinstance(node.right, ast.Constant)
        and node.right.value == "/"
    }
    topics = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "topic"
        ):
            levels = [_placeholder(arg) for arg in node.args]
            if id(node) in prefixed:
                levels.append("+")
            topics.add("/".join(levels))
    return topics


def _matches(pattern: str, topic: str) -> bool:
    """``topic`` is an instance of ``pattern`` (``+`` in the pattern: any one level)."""
    want, have = pattern.split("/"), topic.split("/")
    return len(want) == len(have) and all(w in ("+", h) for w, h in zip(want, have, strict=True))


def _mqtt_sources() -> list[Path]:
    """The source of ``robot.mqtt`` (every module of it, should it become a package)."""
    spec = importlib.util.find_spec("robot.mqtt")
    assert spec is not None and spec.origin is not None
    if spec.submodule_search_locations:
        return sorted(Path(spec.origin).parent.rglob("*.py"))
    return [Path(spec.origin)]


def test_topics_table_is_robot_mqtt() -> None:
    in_code = set().union(*(_code_topics(p.read_text(encoding="utf-8")) for p in _mqtt_sources()))
    documented = {re.sub(r"<[^>]+>", "+", key) for key in doc_keys(DAEMON_DOC, "### Topics")}
    undocumented = sorted(t for t in in_code if not any(_matches(d, t) for d in documented))
    unused = sorted(d for d in documented if not any(_matches(d, t) for t in in_code))
    assert not undocumented and not unused, (
        f"docs/daemon.md's topics: missing {undocumented}, not in robot/mqtt.py {unused}"
    )


def test_code_topics_reads_names_and_prefixes() -> None:
    source = 'a = cfg.topic("event", name)\nb = self.config.topic("cmd") + "/"\n'
    assert _code_topics(source) == {"event/+", "cmd/+"}
    assert _matches("cmd/+", "cmd/start") and not _matches("cmd/start", "cmd/+")
    assert not _matches("cmd/+", "cmd/+/reply")


# --- links ------------------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, code and link markup dropped, punctuation
    other than ``-`` and ``_`` removed, spaces as ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    anchors: set[str] = set()
    for line in _prose(path.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if match:
            slug = _slug(match.group(2))
            n = 0
            while (candidate := slug if n == 0 else f"{slug}-{n}") in anchors:
                n += 1
            anchors.add(candidate)
    return anchors


def _links(path: Path) -> list[str]:
    prose = "\n".join(_prose(path.read_text(encoding="utf-8")))
    prose = _CODE_SPAN.sub("", prose)
    return [
        target
        for target in _LINK.findall(prose)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto: ...
    ]


DOC_FILES = [README, *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path: Path) -> None:
    broken = []
    for target in _links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: {dest.name} has no heading with anchor #{anchor}")
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


def test_docs_exist_and_link_checker_sees_links() -> None:
    names = {p.name for p in DOC_FILES}
    expected = {"architecture.md", "solver.md", "vision.md", "firmware-link.md", "daemon.md"}
    assert expected | {"benchmarks.md", "decisions.md", "README.md"} <= names
    assert _links(README), "README.md links to nothing: the link check would be empty"
    assert _slug("The two-phase engine (`solver/engines/twophase/`)") == (
        "the-two-phase-engine-solverenginestwophase"
    )


@pytest.mark.parametrize(
    ("heading", "enum_name"),
    [
        ("### Error codes", "ErrorCode"),
        ("### Job states", "JobState"),
        ("### Events", "EventName"),
    ],
)
def test_daemon_tables_are_the_enums(heading: str, enum_name: str) -> None:
    """docs/daemon.md's tables of error codes, job states and events list exactly the members
    of robot.daemon.events' enums, and each row's meaning is not empty."""
    from robot.daemon import events

    enum = getattr(events, enum_name)
    rows = doc_table(DAEMON_DOC, heading)
    documented = [row[0].strip("`") for row in rows]
    assert sorted(documented) == sorted(m.value for m in enum), heading
    assert all(row[1].strip() for row in rows), f"{heading}: a row without a meaning"
    assert len(documented) == len(set(documented)), f"{heading}: a row twice"
