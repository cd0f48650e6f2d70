"""The browser table's tests: a real Chromium (Debian's ``chromium`` package, driven by
Playwright through ``executable_path``; no downloaded browser build) against the whole stack
started as the README says (`make run` on the embedded defaults, in a temporary
TONGITS_VAR_DIR, on a free port, bot and deal delays 0), as scripts/smoke.py starts it, on a
copy of a data directory created and migrated once per run (``stack_pgdata``).

Fixtures:
    stack_env   settings of the module's stack (environment variables; none unless a module
                overrides this fixture)
    stack       the running stack of those settings: one per test worker and settings,
                shared by every module that asks for them (tests register accounts of their
                own, so they never meet); stopped, and checked to stop cleanly, at the end of
                the session
    stack_url   the stack's base URL
    browser     a headless Chromium (one per test file)
    watch       ``Watch``: opens pages that record every response, SSE message, JS error
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.support import Watch

ROOT = Path(__file__).resolve().parent.parent.parent
CHROMIUM = os.environ.get("TONGITS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def _smoke():
    """scripts/smoke.py: its start_stack / wait_healthy / stop_stack run `make run`."""
    spec = importlib.util.spec_from_file_location("tongits_smoke", ROOT / "scripts" / "smoke.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["tongits_smoke"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stack_url(stack) -> str:
    return stack.base_url


@pytest.fixture(scope="module")
def stack_env() -> dict[str, str]:
    return {}


#: What every browser stack has beneath a module's settings. The stack serves every browser
#: module of its worker, and their accounts (guests too) all register from 127.0.0.1: the
#: shipped 20 an hour per address is for one person, not for the whole run. The throttle itself
#: is tests/api/test_throttling.py's.
SHARED_STACK_ENV = {"TONGITS_RATE_REGISTER": "1000/h"}


class _Stacks:
    """This test worker's stacks, one per set of settings: each started on first use and kept
    for every later module that asks for the same settings (a start is an initdb copy and eight
    processes importing Django: the longest part of most browser modules)."""

    def __init__(self, pgdata: Path) -> None:
        self.smoke = _smoke()
        self.pgdata = pgdata
        self.running: dict[tuple[tuple[str, str], ...], tuple[Any, Any]] = {}

    def get(self, module_env: dict[str, str]) -> Any:
        env = {**SHARED_STACK_ENV, **module_env}
        key = tuple(sorted(env.items()))
        if key in self.running:
            return self.running[key][0]
        tmp = tempfile.TemporaryDirectory(prefix="tongits-browser-")
        smoke = self.smoke
        stack = smoke.start_stack(Path(tmp.name), smoke.free_port(), env, pgdata=self.pgdata)
        try:
            # As scripts/faults.py: a fresh stack (initdb, every migration, eight processes
            # importing Django) can take over a minute on a machine busy with the other worker.
            smoke.wait_healthy(stack, timeout=120)
        except BaseException:
            smoke.stop_stack(stack)
            print(stack.log_text())
            tmp.cleanup()
            raise
        self.running[key] = (stack, tmp)
        return stack

    def stop(self) -> None:
        """Stop every stack: each must stop cleanly and leave nothing running."""
        failures = []
        for stack, tmp in self.running.values():
            try:
                self.smoke.stop_stack(stack)
            except self.smoke.SmokeError as exc:
                print(stack.log_text())
                failures.append(exc)
            finally:
                tmp.cleanup()
        self.running.clear()
        if failures:
            raise failures[0]


@pytest.fixture(scope="session")
def _stacks(stack_pgdata: Path) -> Iterator[_Stacks]:
    stacks = _Stacks(stack_pgdata)
    try:
        yield stacks
    finally:
        stacks.stop()


@pytest.fixture(scope="module")
def stack(stack_env: dict[str, str], _stacks: _Stacks) -> Any:
    """The running stack (scripts/smoke.py's Stack: base_url, log_text() of every process)."""
    return _stacks.get(stack_env)


# One Chromium per test file, not per session: Playwright's sync API holds an asyncio loop on
# the thread while it runs, and every later test of the worker would then find itself "in an
# async context" (Django's SynchronousOnlyOperation).
@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM}: apt-get install -y chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def watch(browser, stack_url) -> Iterator[Watch]:
    watch = Watch(browser, stack_url)
    try:
        yield watch
    finally:
        watch.close()
