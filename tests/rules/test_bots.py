"""Bots: the levels exist, every bot plays only legal commands, no bot can see a hidden card
(its decisions depend on its seat's view and redacted history only), and the ladder runs."""

from __future__ import annotations

import random
import threading
import time

import pytest

from games.rules import RuleSet, command_key, deal, decide, evolve, fold, legal_commands, new_game
from games.rules.bots import BOTS, LEVELS, HardBot, get_bot
from games.rules.bots import hard as hard_module
from games.rules.ladder import main as ladder_main
from games.rules.ladder import wilson
from games.rules.selfplay import play_match
from games.rules.views import player_view, redact_event


def small_hard() -> HardBot:
    """A hard bot on a small, deterministic playout budget: fast, and no clock in the result."""
    return HardBot(playouts=24, time_limit=None)


def make(name: str):
    return small_hard() if name == "hard" else get_bot(name)


class Checked:
    """Wraps a bot: asserts every command it returns is one of the legal ones."""

    def __init__(self, bot) -> None:
        self.bot = bot
        self.name = bot.name
        self.uses_history = getattr(bot, "uses_history", False)
        self.calls = 0

    def choose(self, view, legal, rng, history=None):
        command = self.bot.choose(view, legal, rng, history)
        assert command_key(command) in {command_key(c) for c in legal}, command
        self.calls += 1
        return command


def test_levels_and_names_exist() -> None:
    assert list(LEVELS) == ["easy", "normal", "hard"]
    for name in [*LEVELS, "random", "greedy"]:
        bot = get_bot(name)
        assert callable(bot.choose)
        assert isinstance(bot.uses_history, bool)
    assert set(BOTS) >= {"random", "greedy", "easy", "normal", "hard"}
    with pytest.raises(ValueError):
        get_bot("grandmaster")


PRESETS = [RuleSet.standard(), RuleSet.house(), RuleSet.h19()]
PRESET_IDS = ["standard", "house", "h19"]


@pytest.mark.parametrize("preset", PRESETS, ids=PRESET_IDS)
@pytest.mark.parametrize("lineup", [("hard", "normal", "easy"), ("easy", "hard", "normal")])
def test_bots_play_only_legal_commands(preset: RuleSet, lineup: tuple[str, ...]) -> None:
    bots = [Checked(make(name)) for name in lineup]
    timed = [0, 0, 0]
    # under h19 a dealer may Fight in its first turn, before anyone else can open: a match can
    # end without some seat ever acting, so play on until every bot has decided something
    for seed in range(11, 21):
        record = play_match(bots, random.Random(seed), preset)
        assert record.state.phase == "match_over"
        timed = [n + len(t) for n, t in zip(timed, record.decision_times, strict=True)]
        if all(b.calls > 0 for b in bots):
            break
    assert all(b.calls > 0 for b in bots)
    assert timed == [b.calls for b in bots]


class Recorder:
    """A bot that keeps the history list play_match hands it, to compare with the events."""

    name = "recorder"
    uses_history = True

    def __init__(self) -> None:
        self.history = None
        self.inner = get_bot("normal")

    def choose(self, view, legal, rng, history=None):
        assert history  # at least game_started and round_started
        self.history = history
        return self.inner.choose(view, legal, rng)


def test_play_match_hands_bots_their_redacted_history_only() -> None:
    recorder = Recorder()
    record = play_match([recorder, "normal", "greedy"], random.Random(3))
    expected = [redact_event(e, 0) for e in record.events]
    # the recorder's list grew with every event, redacted for seat 0 (the last few events after
    # its final decision are there too: it is the same list, kept incrementally)
    assert recorder.history == expected
    for e in recorder.history:
        assert e["type"] != "round_started" or "hands" not in e and "stock" not in e
        assert e["type"] != "drew" or e["seat"] == 0 or "card" not in e


def _positions(rng: random.Random, rules: RuleSet, count: int):
    """Mid-round decision points (state, seat, redacted history) from normal self-play."""
    bots = [get_bot("normal") for _ in range(3)]
    first = new_game(rules, None, rng)
    state = fold([first])
    events = [first]
    out = []
    while len(out) < count:
        if not state.in_round:
            if state.phase == "match_over":
                first = new_game(rules, None, rng)
                state = fold([first])
                events = [first]
            event = deal(state, rng)
            events.append(event)
            state = evolve(state, event)
            continue
        seat = state.turn
        legal = legal_commands(state, seat)
        if len(legal) > 1 and rng.random() < 0.3:
            out.append((state, seat, [redact_event(e, seat) for e in events]))
        command = bots[seat].choose(player_view(state, seat), legal, rng)
        for event in decide(state, seat, command):
            events.append(event)
            state = evolve(state, event)
    return out


def _reshuffle_hidden(state, seat: int, rng: random.Random):
    """The same position with every card ``seat`` cannot see dealt again: other hands and stock
    keep their sizes; the view and the history of ``seat`` stay exactly the same."""
    others = [s for s in range(3) if s != seat]
    cards = list(state.stock)
    for s in others:
        cards.extend(c for c in range(52) if state.hands[s] >> c & 1)
    rng.shuffle(cards)
    hands = list(state.hands)
    at = 0
    for s in others:
        n = state.hands[s].bit_count()
        hands[s] = sum(1 << c for c in cards[at : at + n])
        at += n
    return state._replace(hands=tuple(hands), stock=tuple(cards[at:]))


@pytest.mark.parametrize("name", ["easy", "normal", "hard", "greedy", "random"])
def test_decisions_depend_only_on_what_the_seat_may_see(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    searches = []
    search = HardBot._search
    monkeypatch.setattr(HardBot, "_search", lambda *a: searches.append(1) or search(*a))
    rng = random.Random(2024)
    changed = 0
    for state, seat, history in _positions(rng, RuleSet(), 12):
        other = _reshuffle_hidden(state, seat, rng)
        changed += other.hands != state.hands or other.stock != state.stock
        view = player_view(state, seat)
        assert player_view(other, seat) == view
        legal = legal_commands(state, seat)
        assert legal_commands(other, seat) == legal
        bot = make(name)
        for seed in range(3):
            a = bot.choose(view, legal, random.Random(seed), history)
            b = bot.choose(player_view(other, seat), legal, random.Random(seed), history)
            assert command_key(a) == command_key(b)
    assert changed >= 10  # the hidden cards really did differ
    if name == "hard":
        assert len(searches) >= 10  # the Monte Carlo search itself ran on those deals


def test_hard_bot_is_deterministic_for_a_seed_without_a_clock() -> None:
    state, seat, history = _positions(random.Random(5), RuleSet(), 3)[-1]
    view, legal = player_view(state, seat), legal_commands(state, seat)
    picks = {command_key(small_hard().choose(view, legal, random.Random(1), history)) for _ in "ab"}
    assert len(picks) == 1


class _Counted(HardBot):
    """A hard bot that counts its searches."""

    searches = 0

    def _search(self, *args):
        self.searches += 1
        return super()._search(*args)


def _searched_position():
    """A position where the hard bot searches (at least two candidates), with its view."""
    for state, seat, history in _positions(random.Random(5), RuleSet(), 12):
        view, legal = player_view(state, seat), legal_commands(state, seat)
        bot = _Counted(playouts=8, time_limit=None)
        bot.choose(view, legal, random.Random(0), history)
        if bot.searches:
            return view, legal, history
    raise AssertionError("no searched position")


def test_hard_bot_halves_its_candidates_round_by_round_within_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sequential halving: every round spreads its share of the budget over the live
    candidates, all on the same deals, and the worse half is dropped at its end, so the
    finalists get the most playouts and the whole decision stays within its budget."""
    played: list[tuple] = []
    apply = hard_module._apply
    monkeypatch.setattr(
        hard_module, "_apply", lambda sim, me, a: played.append(a) or apply(sim, me, a)
    )
    found = 0
    for state, seat, history in _positions(random.Random(11), RuleSet(), 60):
        if state.phase != "play" or not any(
            c["type"] == "discard" for c in legal_commands(state, seat)
        ):
            continue
        view, legal = player_view(state, seat), legal_commands(state, seat)
        bot = HardBot(playouts=120, time_limit=None, prune=0, halving=True, compiled=False)
        played.clear()
        bot.choose(view, legal, random.Random(0), history)
        counts = sorted((n for a, n in _count(played).items() if a[0] == "discard"), reverse=True)
        if len(counts) != 5:
            continue  # a move without a searched discard of five candidates
        found += 1
        assert len(played) <= 120
        # 120 over 3 rounds: 8 deals for all five, then 13 more for three, then 20 for two
        assert counts == [41, 41, 21, 8, 8], counts
        if found == 3:
            break
    assert found == 3


def _count(items: list[tuple]) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def test_hard_bot_cap_bounds_the_cpu_time_of_a_decision() -> None:
    """With a budget no decision could spend, the CPU-time cap is what stops the search: the
    decision takes about the cap, never much more."""
    view, legal, history = _searched_position()
    cap = 0.05
    bot = HardBot(playouts=10**9, time_limit=cap, prune=0)  # no pruning: every deal runs on
    for seed in range(3):
        started = time.thread_time()
        bot.choose(view, legal, random.Random(seed), history)
        spent = time.thread_time() - started
        assert cap * 0.6 < spent < cap * 1.5, spent


def test_hard_bot_values_a_long_match_like_one_a_few_wins_from_its_end() -> None:
    """Wins still needed count as at most ``_HORIZON``: at a table of first to 99 wins (the
    API allows it) the hard bot decides as at first to 30, in a recursion of a few hundred
    positions, where valuing the whole match went through a million and never finished."""
    picks = {}
    for target in (30, 99):
        rules = RuleSet(wins_to_match=target)
        state, seat, history = _positions(random.Random(8), rules, 6)[-1]
        view, legal = player_view(state, seat), legal_commands(state, seat)
        hard_module._match_win.cache_clear()
        picks[target] = command_key(small_hard().choose(view, legal, random.Random(2), history))
        assert hard_module._match_win.cache_info().currsize <= (hard_module._HORIZON + 2) ** 3
    assert picks[30] == picks[99]


def test_hard_bot_wall_limit_bounds_a_decision_whatever_cpu_it_gets() -> None:
    """The server's bound (``TONGITS_BOT_THINK_SECONDS``): a decision with a budget and a cap
    it could never reach still ends about ``wall_limit`` after it began, with a legal move."""
    view, legal, history = _searched_position()
    bot = HardBot(playouts=10**9, time_limit=None, prune=0)
    bot.wall_limit = 0.05
    started = time.perf_counter()
    command = bot.choose(view, legal, random.Random(3), history)
    assert time.perf_counter() - started < 0.5
    assert command in legal


def test_tally_pairs_equal_the_mean_and_variance_of_the_listed_differences() -> None:
    """The running sums give each pair's mean difference and sample variance as the lists of
    every value would, whichever order the live candidates come in and after one is dropped."""
    rng = random.Random(9)
    series: list[list[float]] = [[], [], []]
    tally = hard_module.Tally(3)
    for index in range(60):
        alive = [2, 0, 1] if index < 30 else [1, 0]  # candidate 2 dropped after 30 deals
        values = [rng.gauss(i, 4) for i in alive]
        tally.add(alive, values, [0.0, 0.5, 0.0])
        for i, v in zip(alive, values, strict=True):
            series[i].append(v + [0.0, 0.5, 0.0][i])
    for a, b in [(0, 1), (1, 0)]:
        diffs = [x - y for x, y in zip(series[a], series[b], strict=True)]
        total, squares = tally.paired(a, b)
        mean = sum(diffs) / len(diffs)
        assert total / len(diffs) == pytest.approx(mean)
        var = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
        assert (squares - total * mean) / (len(diffs) - 1) == pytest.approx(var)
    assert tally.counts == [60, 60, 30]
    assert tally.sums == pytest.approx([sum(s) for s in series])


def test_hard_bot_search_stops_once_no_candidate_can_beat_the_leader_by_the_margin() -> None:
    """Candidates compared on the same deals: one clearly behind is dropped; the search stops
    when the leader is alone, or when what is left is within ``indifferent`` of it (near-equal
    moves are not worth more playouts), and goes on while a rival could still be better."""

    def tallied(*series: list[float]) -> hard_module.Tally:
        tally = hard_module.Tally(len(series))
        for values in zip(*series, strict=True):
            tally.add(list(range(len(series))), list(values), [0.0] * len(series))
        return tally

    rng = random.Random(4)
    base = [rng.gauss(0, 5) for _ in range(40)]
    lead = [b + 3 for b in base]
    behind = [b - 3 + rng.gauss(0, 0.5) for b in base]
    alive, settled = hard_module._prune(tallied(lead, behind), [0, 1], 2.0, 1.0)
    assert alive == [0] and settled
    twin = [b + 3 + rng.gauss(0, 0.1) for b in base]  # as good as the leader, give or take
    alive, settled = hard_module._prune(tallied(lead, twin), [0, 1], 2.0, 1.0)
    assert sorted(alive) == [0, 1] and settled
    alive, settled = hard_module._prune(tallied(lead, twin), [0, 1], 2.0, 0.0)
    assert sorted(alive) == [0, 1] and not settled  # without a margin it would go on
    # as good on average, but so noisy that it could be better by more than the margin
    noisy = [x + (15 if i % 2 else -15) for i, x in enumerate(lead)]
    alive, settled = hard_module._prune(tallied(lead, noisy), [0, 1], 2.0, 1.0)
    assert sorted(alive) == [0, 1] and not settled


def test_hard_bot_with_a_count_budget_is_deterministic_for_a_seed_even_under_load() -> None:
    """Under the cap the playout count is the limit, and the cap counts this thread's CPU time
    only: a thread burning CPU beside the decision neither changes it nor shortens it."""
    view, legal, history = _searched_position()
    bot = HardBot(playouts=300)  # the default CPU cap, far above what 300 playouts take
    quiet = [command_key(bot.choose(view, legal, random.Random(s), history)) for s in range(4)]
    stop = threading.Event()

    def burn() -> None:
        x = 0
        while not stop.is_set():
            x += 1

    other = threading.Thread(target=burn)
    other.start()
    try:
        loaded = [command_key(bot.choose(view, legal, random.Random(s), history)) for s in range(4)]
    finally:
        stop.set()
        other.join()
    assert loaded == quiet


def test_wilson_interval() -> None:
    lo, hi = wilson(300, 600)
    assert lo < 0.5 < hi and hi - lo < 0.09
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0


def test_ladder_cli_runs(capsys: pytest.CaptureFixture[str]) -> None:
    ladder_main(
        [
            "--bots",
            "hard:playouts=16:time_limit=None,normal,easy",
            "--matches",
            "2",
            "--seed",
            "4",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert "95% CI" in out and "hard" in out and "chips/round" in out
    assert "matches: 2" in out


def test_ladder_cli_runs_h19(capsys: pytest.CaptureFixture[str]) -> None:
    ladder_main(
        [
            "--rules",
            "h19",
            "--bots",
            "hard:playouts=16:time_limit=None,normal,normal",
            "--matches",
            "2",
            "--seed",
            "1",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert "rules: h19" in out and "matches: 2" in out


def test_ladder_results_do_not_depend_on_workers() -> None:
    from games.rules.ladder import run

    specs = ["normal", "greedy", "easy"]
    one = run(specs, 3, seed=9, workers=1, progress=False)
    two = run(specs, 3, seed=9, workers=2, progress=False)
    assert one.wins == two.wins and one.chips == two.chips and one.rounds == two.rounds


@pytest.mark.parametrize(
    "preset",
    [*PRESETS, RuleSet.from_dict({"preset": "h19", "stake": 10})],
    ids=[*PRESET_IDS, "h19-stake-10"],
)
def test_playouts_follow_the_rules_like_the_engine(preset: RuleSet) -> None:
    """The hard bot's fast simulator, given the true deal and playing the normal policy for all
    seats, ends rounds exactly as the engine does with three normal bots (the few differences
    are tie-breaks between equally good moves, never a rule)."""
    from games.rules.bots.heuristics import Params
    from games.rules.bots.knowledge import read
    from games.rules.bots.playout import Sim
    from games.rules.bots.sampling import World

    same = 0
    deals = 60
    for i in range(deals):
        rng = random.Random(i)
        state = fold([new_game(preset, None, rng)])
        state = evolve(state, deal(state, rng))
        k = read(player_view(state, state.turn))
        sim = Sim(k, World(list(state.hands), list(state.stock), {}), Params())
        sim.run()
        assert sum(sim.payouts) == 0
        bots = [get_bot("normal") for _ in range(3)]
        while state.in_round:
            seat = state.turn
            command = bots[seat].choose(player_view(state, seat), legal_commands(state, seat), rng)
            for event in decide(state, seat, command):
                state = evolve(state, event)
        ended = state.last_round
        same += (ended.winner, ended.reason, tuple(ended.payouts)) == (
            sim.winner,
            sim.reason,
            sim.payouts,
        )
    assert same >= 0.9 * deals, same


def test_hard_bot_copes_without_history_or_with_part_of_it() -> None:
    """The API may hand a bot only the round's events, or none: it still plays legally."""
    for state, seat, history in _positions(random.Random(8), RuleSet(), 8):
        view, legal = player_view(state, seat), legal_commands(state, seat)
        keys = {command_key(c) for c in legal}
        for part in (None, [], history[-5:]):
            command = small_hard().choose(view, legal, random.Random(0), part)
            assert command_key(command) in keys


def test_ladder_ratings_are_openskill_replayed_in_match_order() -> None:
    """The ratings the ladder prints are Plackett-Luce applied match by match in index order,
    the way players are rated, whatever order the workers finished in."""
    from openskill.models import PlackettLuce

    from games.rules.ladder import ratings, run

    tally = run(["normal", "greedy", "easy"], 4, seed=2, workers=2, progress=False)
    assert sorted(tally.places) == [0, 1, 2, 3]
    model = PlackettLuce()
    teams = [[model.rating()] for _ in range(3)]
    for index in range(4):
        places = tally.places[index]
        assert sorted(places)[0] == 1 and all(1 <= p <= 3 for p in places)
        teams = model.rate(teams, ranks=list(places))
    assert ratings(tally) == [(t[0].mu, t[0].sigma) for t in teams]


def test_ladder_prints_the_docs_tables() -> None:
    from games.rules.ladder import ladder

    out = ladder(1, False, (("normal,easy,easy", 2, 7), ("easy,normal,greedy", 2, 3)))
    assert "| `--bots normal,easy,easy --matches 2 --seed 7 --workers 1` | normal wins" in out
    levels = [
        line.split(" | ")
        for line in out.splitlines()
        if line.startswith("| `") and "--" not in line
    ]
    assert sorted(row[0].strip("| `") for row in levels) == ["easy", "greedy", "normal"]
    mus = [float(row[2]) for row in levels]
    assert mus == sorted(mus)  # weakest first
    for row in levels:
        assert float(row[1]) == pytest.approx(float(row[2]) - 3 * float(row[3]), abs=0.06)


def test_docs_record_the_ratings_the_api_shows() -> None:
    """docs/bots.md's ratings table and LEVEL_INFO (what the API and the browser show) agree."""
    from pathlib import Path

    from games.rules.bots import LEVEL_INFO

    docs = (Path(__file__).parents[2] / "docs" / "bots.md").read_text()
    for level in LEVEL_INFO:
        row = [ln for ln in docs.splitlines() if ln.startswith(f"| `{level.name}` | ")][-1]
        rating, mu, sigma = (float(x) for x in row.split(" | ")[1:4])
        assert (mu, sigma) == (level.mu, level.sigma), row
        assert rating == pytest.approx(level.rating, abs=0.11)  # the docs round unrounded mu
