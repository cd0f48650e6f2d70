# Short recipes. Everything runs in .venv, created and filled on first use (python3 -m venv).
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NPM_STAMP := node_modules/.installed
# The translations (ops/messages.py): compiled again whenever a catalog changes.
PO_FILES := $(wildcard tongits_site/locale/*/LC_MESSAGES/*.po)
MO_FILES := $(PO_FILES:.po=.mo)

.DEFAULT_GOAL := help
.PHONY: help install messages run cluster chaos backup restore restore-drill rolling-restart bench-cluster manage test lint bench bench-audit bench-moves bench-storage bench-api bench-auth bench-chips bench-streams bench-players bench-bots bench-matchmaking bench-push bench-tournament simulate ladder fairplay-sim bench-fairplay

help:
	@echo "make run       web + Celery worker + scheduler + beat on 0.0.0.0:8000 (embedded PostgreSQL by default)"
	@echo "make cluster   two web nodes behind HAProxy, pgbouncer, a PostgreSQL primary and synchronous standby, on :8100"
	@echo "make chaos     a cluster, tables of people and bots, and faults one after another (under 10 min)"
	@echo "make backup    a base backup of make cluster's primary (pgBackRest; BACKUP_TYPE=full|diff|incr)"
	@echo "make restore TARGET=latest|'2026-12-06 15:04:05+00'  the backups and WAL into a fresh directory"
	@echo "make restore-drill  a cluster under play, a backup, a restore between two moves, checked"
	@echo "make rolling-restart  make cluster's web nodes, workers, schedulers restarted one at a time"
	@echo "make bench-cluster  moves/s and POST p99 through HAProxy + pgbouncer against one node direct"
	@echo "make manage ARGS=\"createsuperuser\"  manage.py on the database make run uses"
	@echo "make test      ruff check + pytest (needs PostgreSQL; .ci/run starts it) + smoke test"
	@echo "make lint      ruff check, ruff format --check, import contracts, no import loop"
	@echo "make bench     rules core benchmark"
	@echo "make bench-audit   the legality audit of whole matches (games.verify)"
	@echo "make bench-moves   the write path vs a raw psycopg append (scratch db tongits_bench)"
	@echo "make bench-api     1, 10, 30 tables over HTTP against a started stack (needs PostgreSQL, Redis)"
	@echo "make bench-auth    GET /me in process: the token look-up remembered vs every request"
	@echo "make bench-chips   a settlement with and without chips; GET /me/wallet beside GET /me"
	@echo "make bench-storage  the bytes a finished match adds to the database (scratch db tongits_bench_storage)"
	@echo "make bench-streams  300 live streams while 10 tables play (needs PostgreSQL)"
	@echo "make bench-players  tables of three people on their streams, stepped (needs PostgreSQL, Redis)"
	@echo "make bench-bots     tables of one person and two bots, per level, stepped; ARGS=\"--people 250\": beside tables of three people (needs PostgreSQL, Redis)"
	@echo "make bench-matchmaking  3,000 people queue over 60 s in three rooms (needs PostgreSQL, Redis)"
	@echo "make bench-push    move to Web Push at a local push service, 20 tables; then a burst of 3,000 pushes to stand-ins of Web Push, FCM and APNs: pushes/s, worker CPU a push (needs PostgreSQL, Redis)"
	@echo "make bench-tournament  a tournament of 27 (9 people, 18 bots) from start to payout (needs PostgreSQL, Redis)"
	@echo "make simulate  100 bot matches, seed 1"
	@echo "make bench-fairplay  the fair-play scoring's CPU per settled match (needs PostgreSQL)"
	@echo "make fairplay-sim  honest, colluding and dumping bots: the share of each flagged (docs/fair-play.md; minutes)"
	@echo "make ladder     the bot levels against each other: docs/bots.md's tables and ratings (about 40 min)"
	@echo "make install   create .venv and install the project with dev extras; npm ci (axe-core)"
	@echo "make messages  the code's texts into tongits_site/locale (then translate the .po files)"

$(PY):
	$(PYTHON) -m venv $(VENV)

# Reinstall only when pyproject.toml, or the compiled playouts' sources, are newer than the stamp.
$(STAMP): pyproject.toml setup.py games/rules/bots/_compiled.pyx | $(PY)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(STAMP) $(NPM_STAMP) $(MO_FILES)

# Every language's .po compiled to the .mo Django reads (Babel: no GNU gettext needed).
$(MO_FILES) &: $(PO_FILES) $(STAMP)
	$(PY) -m ops.messages compile

messages: $(STAMP)
	$(PY) -m ops.messages extract

# axe-core for tests/browser, exactly as package-lock.json pins it; again when either file changes.
$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Web (gunicorn), Celery worker and beat; embedded PostgreSQL unless DATABASE_URL is set.
run: $(STAMP) $(MO_FILES)
	$(PY) -m ops.stack

# The cluster on this machine (cluster/): Debian's postgresql-15, pgbouncer, haproxy and redis.
cluster: $(STAMP) $(MO_FILES)
	$(PY) -m cluster

# Faults against a cluster of its own, while simulated people and bots play (scripts/chaos.py).
chaos: $(STAMP) $(MO_FILES)
	$(PY) scripts/chaos.py

# Backups of the running `make cluster` (cluster/backup.py: pgBackRest, its WAL archive).
BACKUP_TYPE ?= full
TARGET ?= latest

backup: $(STAMP)
	$(PY) -m cluster backup --type $(BACKUP_TYPE)

# The newest backup and the WAL up to TARGET into a fresh directory (RESTORE_INTO, default
# var/restore/<the target's digits>), recovered and promoted, then stopped.
restore: $(STAMP)
	$(PY) -m cluster restore --target "$(TARGET)" $(if $(RESTORE_INTO),--into "$(RESTORE_INTO)")

# A cluster of its own under play, a backup, a restore to a moment between two moves, checked.
restore-drill: $(STAMP) $(MO_FILES)
	$(PY) scripts/restore_drill.py

# New code with no downtime: the migrations (expand only), then one process at a time.
rolling-restart: $(STAMP)
	$(PY) -m cluster rolling-restart --migrate

# HAProxy + pgbouncer + two nodes against one node straight on PostgreSQL, interleaved.
bench-cluster: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_cluster.py

# manage.py on the database `make run` uses (ops/manage.py): make manage ARGS="createsuperuser".
manage: $(STAMP) $(MO_FILES)
	@$(PY) -m ops.manage $(ARGS)

# Three pytest-xdist workers on two cores (the tests wait on the servers and browsers they
# start), each test file on one of them (its module's servers shared).
TEST_WORKERS ?= 3

test: $(STAMP) $(NPM_STAMP) $(MO_FILES)
	$(PY) -m ruff check .
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile
	$(PY) scripts/smoke.py

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q -p no:cacheprovider tests/test_imports.py

bench: $(STAMP)
	$(PY) -m games.rules.bench

bench-audit: $(STAMP)
	$(PY) -m games.verify.bench

# The write path (a move through the service) against a raw psycopg append, on a scratch db.
BENCH_DB ?= postgres://postgres@127.0.0.1:5432/tongits_bench

bench-moves: $(STAMP)
	DATABASE_URL=$(BENCH_DB) $(PY) -m ops.ensure_db
	DATABASE_URL=$(BENCH_DB) $(PY) manage.py migrate -v0
	DATABASE_URL=$(BENCH_DB) $(PY) manage.py bench_moves

# The whole database's growth per finished quick-play match, from pg_total_relation_size.
bench-storage: $(STAMP)
	$(PY) scripts/bench_storage.py

bench-api: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_api.py

bench-auth: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_auth.py

bench-chips: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_chips.py

# 300 SSE streams on one uvicorn process while 10 tables play: latency, memory, idle CPU.
bench-streams: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_streams.py

# Players per node: the stack as make run starts it, tables of three people who follow their
# streams and think 1.5-4.5 s before each move, stepped from 250 to 1,000 tables.
bench-players: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_players.py

# Tables of one person against two bots of each level (easy, normal, hard): the stack as make run
# starts it, the person as in bench-players, stepped to 500 tables; the bots' replies and CPU.
# ARGS="--people 250": tables of three people play on the same stack throughout, their POSTs and
# streams held to bench-players' targets; ARGS="--niceness 0": the bots' worker at the requests'
# priority (TONGITS_BOT_NICENESS).
bench-bots: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_bots.py $(ARGS)

# The matchmaker: the stack as make run starts it, 3,000 people on /me/stream who queue over
# 60 s in three rooms and resign once matched; ticket-to-matched, tables a second, CPU a table.
bench-matchmaking: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_matchmaking.py

# Move to push: the stack as make run starts it, tables of three people with no stream open,
# each turn's Web Push timed from the move's answer to its arrival at a local push service.
bench-push: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_push.py
	$(PY) scripts/bench_push_burst.py

# A tournament of 27 from its start to its payout: nine people over HTTP, bots in the other
# places; wall time, CPU a match, the tournaments' extra work in the scheduler.
bench-tournament: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_tournament.py $(ARGS)

simulate: $(STAMP)
	$(PY) -m games.rules.simulate --matches 100 --seed 1

# What scoring a settled match for fair play costs the worker (scripts/bench_fairplay.py).
bench-fairplay: $(STAMP) $(MO_FILES)
	$(PY) scripts/bench_fairplay.py

# The fair-play detection against colluding and dumping bots (docs/fair-play.md "The simulation").
fairplay-sim: $(STAMP)
	nice -n 10 $(PY) -m fairplay.detection.simulate --seed 1

ladder: $(STAMP)
	$(PY) -m games.rules.ladder --ladder --workers 2
