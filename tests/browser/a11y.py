"""Accessibility checks of a page the browser tests drive: axe-core's rules (the npm package of
package.json, injected from node_modules) and the size of every tap target on a phone.

Both helpers return what they found instead of asserting, so that a test can visit every screen
at every size first and then fail once with the whole list.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
INSTALL_HINT = "npm ci --no-audit --no-fund (or make install), at the checkout's root"
BLOCKING = ("serious", "critical")  # the impacts that fail a test; minor and moderate are listed
MIN_TAP = 40  # CSS px a side: a fingertip's target on a phone
# Rules whose "needs review" answers count as violations: axe cannot tell whether a name on an
# element that may not carry one (a <p aria-label>) is read, but on this client it never is.
REVIEWED = ("aria-prohibited-attr",)

# Every violation (and the "needs review" answers of the rules named) as plain data: rule,
# impact, help text, and each node's selector and summary.
_RUN_AXE = """async (reviewed) => {
  const result = await axe.run(document, { resultTypes: ["violations", "incomplete"] });
  const review = result.incomplete.filter((v) => reviewed.includes(v.id));
  return [...result.violations, ...review].map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.map((n) => ({
      target: n.target.map(String).join(" "),
      impact: n.impact,
      summary: n.failureSummary || "",
    })),
  }));
}"""

# What a finger can press: links, buttons, form fields, summaries, anything made focusable.
_SMALL_TARGETS = """(minimum) => {
  const selector = [
    "a[href]", "button", "input:not([type=hidden])", "select", "textarea", "summary",
    "[role=button]", "[role=link]", "[tabindex]:not([tabindex='-1'])",
  ].join(",");
  const describe = (el) => {
    let text = el.tagName.toLowerCase();
    if (el.id) text += `#${el.id}`;
    if (el.dataset.testid) text += `[data-testid=${el.dataset.testid}]`;
    if (el.dataset.card) text += `[data-card=${el.dataset.card}]`;
    const name = (el.getAttribute("aria-label") || el.textContent || el.value || "").trim();
    return name ? `${text} "${name.slice(0, 40)}"` : text;
  };
  const small = [];
  for (const el of document.querySelectorAll(selector)) {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (!box.width || !box.height || style.visibility === "hidden") continue;
    if (box.width < minimum || box.height < minimum) {
      small.push({ element: describe(el), width: box.width, height: box.height });
    }
  }
  return small;
}"""


@dataclass(frozen=True)
class Violation:
    """One axe rule broken on one screen, with the nodes that break it."""

    screen: str
    rule: str
    impact: str
    help: str
    nodes: tuple[dict[str, str], ...]

    @property
    def blocking(self) -> bool:
        return self.impact in BLOCKING

    def describe(self) -> str:
        count = len(self.nodes)
        lines = [f"{self.screen}: {self.rule} ({self.impact}, {count} nodes): {self.help}"]
        for node in self.nodes:
            summary = " ".join(node["summary"].split())
            lines.append(f"    {node['target']}  -- {summary}")
        return "\n".join(lines)


def require_axe() -> Path:
    """The axe-core script, failing the test (never skipping it) when npm has not installed it:
    an accessibility check that silently does not run would pass for the wrong reason."""
    if not AXE_JS.is_file():
        pytest.fail(f"axe-core is missing ({AXE_JS}): run {INSTALL_HINT}", pytrace=False)
    return AXE_JS


def axe_violations(page: Any, screen: str) -> list[Violation]:
    """Run every axe-core rule on the page as it is now; ``screen`` names it in the report.

    The script is injected once per document (it survives the client's hash routing) and again
    after a reload or a navigation has dropped it.
    """
    script = require_axe()
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(path=str(script))
    # One frame for the layout to settle after a resize or a redraw.
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
    return [
        Violation(screen, v["id"], v["impact"] or "?", v["help"], tuple(v["nodes"]))
        for v in page.evaluate(_RUN_AXE, list(REVIEWED))
    ]


def blocking_report(violations: list[Violation]) -> str:
    """The serious and critical violations, readable: rule, impact, target selectors, summary."""
    return "\n".join(v.describe() for v in violations if v.blocking)


def small_tap_targets(page: Any, screen: str, minimum: int = MIN_TAP) -> list[str]:
    """Every visible interactive element narrower or shorter than ``minimum`` CSS px."""
    return [
        f"{screen}: {t['element']} is {t['width']:.0f}x{t['height']:.0f} px"
        for t in page.evaluate(_SMALL_TARGETS, minimum)
    ]
