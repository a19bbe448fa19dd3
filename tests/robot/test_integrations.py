"""The shipped Home Assistant dashboard and Node-RED flow name only entities and topics the
daemon really has."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from robot.commands import VERBS
from robot.config import load_config
from robot.discovery import discovery_configs
from tests.robot.helpers import CONFIGS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations"
CONFIG = load_config(CONFIGS / "six_motor.toml")
#: the events the daemon publishes (docs/daemon.md's table, itself checked against the code)
EVENTS_DOC = (Path(__file__).resolve().parents[2] / "docs" / "daemon.md").read_text("utf-8")


def _entity_ids(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("entity", "entity_id") and isinstance(value, str):
                found.add(value)
            elif key == "entity_id" and isinstance(value, list):
                found.update(v for v in value if isinstance(v, str))
            else:
                found |= _entity_ids(value)
    elif isinstance(node, list):
        for item in node:
            found |= _entity_ids(item)
    return found


def test_dashboard_names_only_discovered_entities() -> None:
    dashboard = yaml.safe_load((DOCS / "home-assistant-dashboard.yaml").read_text("utf-8"))
    named = _entity_ids(dashboard)
    discovered = {
        json.loads(payload)["default_entity_id"] for _, payload in discovery_configs(CONFIG, "")
    }
    assert len(named) >= 10
    assert named <= discovered, sorted(named - discovered)


def _event_names() -> set[str]:
    section = EVENTS_DOC.split("### Events", 1)[1].split("\n### ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE))


def test_node_red_flow_uses_only_real_topics() -> None:
    flow = json.loads((DOCS / "node-red-flow.json").read_text("utf-8"))
    base = CONFIG.topic()
    events = _event_names()
    assert {"done", "error", "move_executed"} <= events
    inbound = {f"{base}/cmd/{verb}" for verb in VERBS}
    outbound = {f"{base}/{t}" for t in ("status", "availability", "reply", "event/+")}
    outbound |= {f"{base}/event/{e}" for e in events}
    outbound |= {f"{base}/cmd/{verb}/reply" for verb in VERBS}
    topics = [(n["type"], n["topic"]) for n in flow if n["type"] in ("mqtt in", "mqtt out")]
    assert len(topics) >= 6
    for kind, topic in topics:
        assert topic in (outbound if kind == "mqtt in" else inbound), (kind, topic)
    for node in flow:
        if node["type"] == "inject":
            assert json.loads(node["payload"]) == {"source": "node-red"}
