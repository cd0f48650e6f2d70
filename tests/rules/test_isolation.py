"""The rules core imports nothing from Django: proven in a fresh interpreter where Django
cannot be imported at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys

class NoDjango:
    def find_spec(self, name, path=None, target=None):
        if name == "django" or name.startswith("django.") or name.startswith("rest_framework"):
            raise ImportError("django is not importable in the rules core")
        return None

sys.meta_path.insert(0, NoDjango())
import games.rules, games.rules.bots, games.rules.selfplay, games.rules.simulate, games.rules.bench
import random
from games.rules.selfplay import play_match
play_match(["greedy", "random", "greedy"], random.Random(1))
assert not any(m == "django" or m.startswith("django.") for m in sys.modules)
print("isolated")
"""


def test_rules_core_runs_without_django() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "isolated"


def test_games_package_init_does_not_pull_django_into_the_core() -> None:
    source = (ROOT / "games" / "rules").rglob("*.py")
    for path in source:
        text = path.read_text()
        assert "import django" not in text and "from django" not in text, path
