"""docker/compose.yaml, the production layout, checked without a Docker engine.

Services, commands, health checks and start-up order are read with PyYAML. The environment
variables the code reads are found by scanning the sources (``os.environ[...]``,
``os.environ.get(...)``, ``os.getenv(...)``, ``"X" in os.environ`` and the ``env*(...)`` helpers
of settings.py), so a setting added to the code without adding it to compose fails here.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker" / "compose.yaml"
# What the image contains and runs (docker/Dockerfile copies these).
SOURCES = [
    ROOT / "manage.py",
    *(
        ROOT / pkg
        for pkg in (
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
    ),
]
APP_SERVICES = ("web", "worker", "bots", "scheduler", "notifier", "beat")
ENV_HELPER = re.compile(r"^env(_\w+)?$")  # env_bool, env_list, env_float, ... in settings.py


# --- the scan ----------------------------------------------------------------------------------


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def _callee_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _reads(tree: ast.AST) -> list[ast.expr]:
    """The name argument of every read of the environment in ``tree``."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if _is_environ(node.value):
                found.append(node.slice)
        elif isinstance(node, ast.Compare) and _is_environ(node.comparators[0]):
            if isinstance(node.ops[0], ast.In | ast.NotIn):
                found.append(node.left)
        elif isinstance(node, ast.Call) and node.args:
            func, name = node.func, _callee_name(node)
            environ_get = isinstance(func, ast.Attribute) and _is_environ(func.value)
            if (environ_get and name == "get") or name == "getenv" or ENV_HELPER.match(name):
                found.append(node.args[0])
    return found


def scan_env_reads(source: str, filename: str = "<source>") -> tuple[set[str], list[str]]:
    """(variable names read, places that read a computed name outside an ``env*`` helper)."""
    tree = ast.parse(source, filename)
    helper_bodies = {
        id(inner)
        for fn in ast.walk(tree)
        if isinstance(fn, ast.FunctionDef) and ENV_HELPER.match(fn.name)
        for inner in ast.walk(fn)
    }
    names: set[str] = set()
    computed: list[str] = []
    for arg in _reads(tree):
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            names.add(arg.value)
        elif id(arg) not in helper_bodies:
            computed.append(f"{filename}:{arg.lineno}")
    return names, computed


def code_env_reads() -> tuple[set[str], list[str]]:
    names: set[str] = set()
    computed: list[str] = []
    for source in SOURCES:
        for path in [source] if source.is_file() else sorted(source.rglob("*.py")):
            found, unknown = scan_env_reads(path.read_text(), str(path.relative_to(ROOT)))
            names |= found
            computed += unknown
    return names, computed


def test_scan_recognises_every_form_of_read() -> None:
    source = """
import os
from os import environ
def env_int(name, default):
    return int(os.environ.get(name, default))  # a helper: its computed name is fine
A = os.environ["A"]
B = os.environ.get("B", "x")
C = os.getenv("C")
D = environ["D"]
E = "E" in os.environ
F = env_int("F", 1)
G = settings.env_bool("G")
os.environ.setdefault("NOT_A_READ", "1")
os.environ["NOT_A_READ_EITHER"] = "1"
"""
    assert scan_env_reads(source) == ({"A", "B", "C", "D", "E", "F", "G"}, [])
    assert scan_env_reads("import os\nname = 'X'\nos.environ.get(name)\n")[1] == ["<source>:3"]


def test_the_code_reads_the_settings_we_know_of() -> None:
    names, computed = code_env_reads()
    assert not computed, f"environment read with a computed name (use a literal): {computed}"
    assert {
        "DJANGO_SECRET_KEY",
        "DATABASE_URL",
        "CELERY_BROKER_URL",
        "TONGITS_BOT_DELAY_SECONDS",
        "TONGITS_NEXT_ROUND_DELAY_SECONDS",
        "TONGITS_SWEEP_INTERVAL_SECONDS",
    } <= names


# --- compose.yaml ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return compose["services"]


def _environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):  # the ["KEY=value", ...] form
        return dict(item.partition("=")[::2] for item in env)
    return {key: "" if value is None else str(value) for key, value in env.items()}


def _command(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    return command.split() if isinstance(command, str) else command


def _healthcheck(service: dict[str, Any]) -> str:
    test = service["healthcheck"]["test"]
    return test if isinstance(test, str) else " ".join(test)


def test_services(services: dict[str, dict[str, Any]]) -> None:
    assert {"web", "worker", "beat", "postgres", "redis", "migrate"} <= set(services)
    assert services["postgres"]["image"].split(":")[0] == "postgres"
    assert services["postgres"]["image"].split(":")[1] in {"15", "16"}
    assert services["redis"]["image"].split(":")[0] == "redis"


def test_web_worker_beat_and_migrate_run_one_image(services: dict[str, dict[str, Any]]) -> None:
    roles = [services[name] for name in (*APP_SERVICES, "migrate")]
    assert len({role["image"] for role in roles}) == 1
    for role in roles:
        assert role["build"]["dockerfile"] == "docker/Dockerfile"
        assert (COMPOSE.parent / role["build"]["context"] / role["build"]["dockerfile"]).is_file()


def test_commands(services: dict[str, dict[str, Any]]) -> None:
    web = _command(services["web"])
    assert web[:2] == ["gunicorn", "tongits_site.asgi:application"]
    assert "--worker-class=runtime.asgi_worker.BalancedUvicornWorker" in web  # ASGI
    assert "--reuse-port" in web  # each worker also listens on its own socket
    assert "--bind=0.0.0.0:8000" in web
    assert _command(services["worker"])[:4] == ["celery", "-A", "tongits_site", "worker"]
    assert _command(services["beat"])[:4] == ["celery", "-A", "tongits_site", "beat"]
    bots = _command(services["bots"])
    assert bots[:2] == ["nice", "-n"] and bots[3:7] == ["celery", "-A", "tongits_site", "worker"]
    assert "--queues=bots" in bots and services["bots"]["environment"]["TONGITS_BOT_QUEUE"]
    assert _command(services["scheduler"]) == ["python", "manage.py", "run_scheduler"]
    assert _command(services["notifier"]) == ["python", "manage.py", "run_notifier"]
    assert "manage.py migrate --noinput" in " ".join(_command(services["migrate"]))
    assert services["migrate"]["restart"] == "no"  # one-shot


def test_health_checks(services: dict[str, dict[str, Any]]) -> None:
    assert "http://localhost:8000/healthz" in _healthcheck(services["web"])
    assert "celery -A tongits_site inspect ping" in _healthcheck(services["worker"])
    assert "manage.py health" in _healthcheck(services["worker"])  # the sweeper's heartbeat
    assert "manage.py health" in _healthcheck(services["beat"])
    assert "pg_isready" in _healthcheck(services["postgres"])
    assert "redis-cli ping" in _healthcheck(services["redis"])


def test_start_up_order(services: dict[str, dict[str, Any]]) -> None:
    for name in APP_SERVICES:
        assert services[name]["depends_on"] == {
            "postgres": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
            "migrate": {"condition": "service_completed_successfully"},
        }, name
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name, service in services.items():
        for dependency, rule in (service.get("depends_on") or {}).items():
            if rule["condition"] == "service_healthy":
                assert "healthcheck" in services[dependency], f"{name} waits on {dependency}"


def test_beat_runs_exactly_one_replica(services: dict[str, dict[str, Any]]) -> None:
    assert services["beat"]["deploy"]["replicas"] == 1
    assert "scale" not in services["beat"]


@pytest.mark.parametrize("name", APP_SERVICES + ("migrate",))
def test_every_setting_the_code_reads_is_provided(
    services: dict[str, dict[str, Any]], name: str
) -> None:
    names, _ = code_env_reads()
    missing = names - set(_environment(services[name]))
    assert not missing, f"{name} lacks {sorted(missing)} (add them to x-app-env)"


def test_app_services_reach_the_compose_database_and_broker(
    services: dict[str, dict[str, Any]],
) -> None:
    for name in APP_SERVICES:
        env = _environment(services[name])
        assert "@postgres:5432/" in env["DATABASE_URL"], name
        assert env["CELERY_BROKER_URL"].startswith("redis://redis:6379/"), name


def test_the_image_holds_every_package_the_project_installs() -> None:
    """The Dockerfile copies each package pyproject.toml installs, or the image cannot start."""
    import tomllib

    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"
    ]["find"]["include"]
    packages = {pattern.rstrip("*") for pattern in include}
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    copied = set(re.findall(r"^COPY (\w+) \./\1$", dockerfile, re.MULTILINE))
    assert packages <= copied, sorted(packages - copied)
    assert {p.name for p in SOURCES if p.is_dir()} == packages


def test_prometheus_scrapes_the_web_service_with_the_token_and_grafana_shows_it(
    services: dict[str, dict[str, Any]],
) -> None:
    assert services["prometheus"]["image"].split(":")[0] == "prom/prometheus"
    assert services["grafana"]["image"].split(":")[0] == "grafana/grafana"
    config = yaml.safe_load((COMPOSE.parent / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    job = jobs["tongits-web"]
    assert job["metrics_path"] == "/metrics"
    assert job["static_configs"][0]["targets"] == ["web:8000"]
    assert job["authorization"]["credentials_file"] == "/tmp/metrics-token"
    assert "TONGITS_METRICS_TOKEN" in _environment(services["prometheus"])
    host, _, port = job["static_configs"][0]["targets"][0].partition(":")
    allowed = _environment(services["web"])["DJANGO_ALLOWED_HOSTS"]
    assert host in allowed and port == "8000"  # Django answers the scrape's Host
    web = _environment(services["web"])
    assert web["PROMETHEUS_MULTIPROC_DIR"] in {m.split(":")[0] for m in services["web"]["tmpfs"]}

    # Every other application service serves its own metrics; Prometheus finds each by name.
    processes = jobs["tongits-processes"]
    assert processes["authorization"]["credentials_file"] == "/tmp/metrics-token"
    [found] = processes["dns_sd_configs"]
    exporting = set(APP_SERVICES) - {"web"}
    assert set(found["names"]) == exporting
    for name in exporting:
        env = _environment(services[name])
        assert env["TONGITS_METRICS_PORT"] == str(found["port"]), name
        assert env["TONGITS_METRICS_ADDRESS"] == "0.0.0.0", name  # reached from prometheus
        tmpfs = {m.split(":")[0] for m in services[name]["tmpfs"]}
        assert env["PROMETHEUS_MULTIPROC_DIR"] in tmpfs, name


def test_the_dashboard_plots_metrics_the_server_exports() -> None:
    dashboard = json.loads((COMPOSE.parent / "grafana" / "tongits.json").read_text())
    exported = (ROOT / "metrics" / "instruments.py").read_text() + (
        ROOT / "metrics" / "exposition.py"
    ).read_text()
    names = set()
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            names |= set(re.findall(r"tongits_[a-z_]+", target["expr"]))
    assert names
    for name in names:
        base = re.sub(r"_(bucket|count|sum|total)$", "", name)
        assert f'"{base}' in exported or f'"{name}"' in exported, name
