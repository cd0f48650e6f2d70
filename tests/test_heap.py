"""A web process's collector: the start-up heap frozen, full passes rare (``runtime.heap``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_settled_process_freezes_its_start_up_heap_and_makes_full_passes_rare():
    script = (
        "import gc, django; django.setup()\n"
        "from runtime import heap\n"
        "young, middle, _ = gc.get_threshold()\n"
        "heap.settle()\n"
        "assert gc.get_threshold() == (young, middle, heap.FULL_AFTER), gc.get_threshold()\n"
        "assert gc.get_freeze_count() > 10_000, gc.get_freeze_count()\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={"DJANGO_SETTINGS_MODULE": "tongits_site.settings", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip() == "ok", done.stderr
