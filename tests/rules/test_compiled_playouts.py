"""The hard bot's compiled deals and playouts (``games/rules/bots/_compiled.pyx``) against the
pure-Python ``Sampler`` and ``Sim`` they stand for: the same arrangements, lay-off targets,
deals, playout values and, for a seed, the same moves and the same generator state after them,
under every preset. The compiled module must be built (``make install`` builds it)."""

from __future__ import annotations

import random

import pytest

from games.rules import RuleSet
from games.rules.bots import HardBot, get_bot
from games.rules.bots import _compiled as compiled
from games.rules.bots import hard as hard_module
from games.rules.bots.heuristics import targets
from games.rules.bots.knowledge import Knowledge
from games.rules.melds import best_arrangement, candidate_melds
from games.rules.selfplay import play_match

PRESETS = [RuleSet.standard(), RuleSet.house(), RuleSet.h19()]
PRESET_IDS = ["standard", "house", "h19"]


def test_the_hard_bot_uses_the_compiled_playouts() -> None:
    assert hard_module.CompiledSearch is compiled.Search


def _hands(rng: random.Random, count: int):
    for _ in range(count):
        hand = 0
        for c in rng.sample(range(52), rng.randint(0, 16)):
            hand |= 1 << c
        yield hand


@pytest.mark.parametrize("ace_high", [False, True])
def test_compiled_arrangement_is_the_same_deadwood_and_melds_in_the_same_order(
    ace_high: bool,
) -> None:
    rng = random.Random(7)
    for hand in _hands(rng, 20_000):
        assert compiled.arrangement(hand, ace_high) == best_arrangement(hand, ace_high), hand


@pytest.mark.parametrize("ace_high", [False, True])
def test_compiled_lay_off_targets_are_the_same_cards(ace_high: bool) -> None:
    rules = RuleSet(ace_high_runs=ace_high)
    rng = random.Random(8)
    seen = 0
    for hand in _hands(rng, 3_000):
        for meld in candidate_melds(hand, rules):
            is_set = meld & ~(0x1001001001 << ((meld & -meld).bit_length() - 1) % 13) == 0
            assert compiled.lay_off_targets(meld, is_set, ace_high) == targets(
                meld, is_set, ace_high
            )
            seen += 1
    assert seen > 1_000


class _Compared(HardBot):
    """A hard bot that, before each search, deals and plays out every candidate both ways from
    the same generator state and asserts the deals and every playout's value are the same."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.searches = 0
        self.deals = 0

    def _search(self, k: Knowledge, cands, rng: random.Random):
        state = rng.getstate()
        alive = list(range(len(cands)))
        fast_rng, slow_rng = random.Random(), random.Random()
        fast_rng.setstate(state)
        slow_rng.setstate(state)
        fast = self._compiled_search(k, cands, self.sampler(k), self.win_bonus, fast_rng)
        assert fast is not None
        fast.load(fast_rng)
        slow = self._python_deals(k, cands, self.sampler(k), self.win_bonus, slow_rng)
        for _ in range(12):
            assert fast.deal(alive) == slow(alive)
            self.deals += 1
        fast.store(fast_rng)
        assert fast_rng.getstate() == slow_rng.getstate()
        # the deals alone, as Sampler.sample returns them
        world_rng = random.Random()
        world_rng.setstate(state)
        sampler = self.sampler(k)
        fast = self._compiled_search(k, cands, sampler, self.win_bonus, world_rng)
        fast.load(world_rng)
        check = random.Random()
        check.setstate(state)
        for _ in range(12):
            world = sampler.sample(check)
            hands, stock, hidden = fast.world()
            assert (hands, stock, hidden) == (world.hands, world.stock, world.hidden_masks)
        self.searches += 1
        return super()._search(k, cands, rng)


@pytest.mark.parametrize("preset", PRESETS, ids=PRESET_IDS)
def test_compiled_deals_and_playout_values_equal_the_python_ones(preset: RuleSet) -> None:
    bot = _Compared(playouts=60, time_limit=None)
    seed = 31
    while bot.searches < 12 and seed < 40:
        play_match([bot, get_bot("normal"), get_bot("normal")], random.Random(seed), preset)
        seed += 1
    assert bot.searches >= 12 and bot.deals >= 144


class _Twin:
    """Plays the compiled hard bot and checks, decision by decision, that the pure-Python one
    given the same generator state picks the same move and leaves the generator the same."""

    name = "hard"
    uses_history = True

    def __init__(self, playouts: int) -> None:
        self.fast = HardBot(playouts=playouts, time_limit=None)
        self.slow = HardBot(playouts=playouts, time_limit=None, compiled=False)
        self.searched = 0

    def choose(self, view, legal, rng, history=None):
        before = rng.getstate()
        slow_rng = random.Random()
        slow_rng.setstate(before)
        move = self.fast.choose(view, legal, rng, history)
        assert self.slow.choose(view, legal, slow_rng, history) == move
        assert rng.getstate() == slow_rng.getstate()
        self.searched += rng.getstate() != before
        return move


@pytest.mark.parametrize("preset", PRESETS, ids=PRESET_IDS)
def test_compiled_and_pure_python_hard_bots_make_the_same_moves_for_a_seed(
    preset: RuleSet,
) -> None:
    twins = [_Twin(150), _Twin(150), get_bot("normal")]
    seed = 17
    while twins[0].searched + twins[1].searched < 20 and seed < 60:
        record = play_match(twins, random.Random(seed), preset)
        assert record.state.match_winner is not None
        seed += 1
    assert twins[0].searched + twins[1].searched >= 20


class _Answering:
    """The normal bot, keeping every position where it had to answer a Draw call."""

    name = "normal"
    uses_history = True

    def __init__(self) -> None:
        self.bot = get_bot("normal")
        self.seen: list[tuple[dict, list]] = []

    def choose(self, view, legal, rng, history=None):
        if view["phase"] == "draw_call" and len(legal) > 1:
            self.seen.append((view, list(history or [])))
        return self.bot.choose(view, legal, rng, history)


def test_compiled_and_pure_python_draw_answer_values_are_the_same() -> None:
    """The fair-play review's values of challenging and folding a Draw call are the same
    numbers, and leave the generator the same, whichever playouts compute them."""
    players = [_Answering(), _Answering(), _Answering()]
    seed = 3
    while sum(len(p.seen) for p in players) < 6 and seed < 40:
        play_match(players, random.Random(seed), RuleSet())
        seed += 1
    positions = [pos for p in players for pos in p.seen][:6]
    assert len(positions) == 6
    fast, slow = HardBot(), HardBot(compiled=False)
    for view, history in positions:
        a, b = random.Random(5), random.Random(5)
        assert fast.answer_values(view, history, a, deals=40) == slow.answer_values(
            view, history, b, deals=40
        )
        assert a.getstate() == b.getstate()
