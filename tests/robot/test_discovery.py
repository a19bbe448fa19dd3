"""Home Assistant discovery follows the current schema, and its templates render what a
dashboard should show from real status and event payloads (Jinja2, as Home Assistant uses)."""

from __future__ import annotations

import json
from typing import Any

import jinja2
import pytest

from robot.commands import NewJobCommand, parse_command
from robot.config import load_config
from robot.daemon import State
from robot.discovery import DAEMON_STATES, discovery_configs, discovery_topics
from tests.robot.helpers import CONFIGS

CONFIG = load_config(CONFIGS / "six_motor.toml")
CONFIGS_BY_OBJECT = {
    topic.split("/")[-2]: (topic.split("/")[1], json.loads(payload))
    for topic, payload in discovery_configs(CONFIG, "9.9.9")
}
ENV = jinja2.Environment(undefined=jinja2.StrictUndefined)


def render(template: str, payload: dict[str, Any]) -> str:
    return ENV.from_string(template).render(value_json=payload).strip()


STATUS_IDLE = {
    "state": "IDLE",
    "progress": 0,
    "eta_s": None,
    "error": None,
    "firmware": {"connected": False, "version": None, "boot_id": None},
}
STATUS_RUNNING = {
    **STATUS_IDLE,
    "state": "EXECUTING",
    "progress": 45,
    "eta_s": 1.07,
    "firmware": {"connected": True, "version": "1.0.0", "boot_id": 7},
}
STATUS_FAILED = {**STATUS_IDLE, "state": "ERROR", "error": {"code": "scan_invalid", "message": "x"}}


def test_every_entity_uses_the_current_schema() -> None:
    assert CONFIGS_BY_OBJECT
    for obj, (component, body) in CONFIGS_BY_OBJECT.items():
        assert "object_id" not in body, obj
        assert body["default_entity_id"] == f"{component}.{body['unique_id']}"
        assert body["origin"] == {"name": "cuberobot", "sw_version": "9.9.9"}
        assert body["device"]["identifiers"] == ["cuberobot_six_motor"]
        assert body["availability_topic"] == "cuberobot/six-motor/availability"


def test_state_sensor_is_an_enum_of_the_daemon_states() -> None:
    _, body = CONFIGS_BY_OBJECT["state"]
    assert body["device_class"] == "enum"
    assert body["options"] == list(DAEMON_STATES) == [str(s) for s in State]
    for status in (STATUS_IDLE, STATUS_RUNNING, STATUS_FAILED):
        assert render(body["value_template"], status) in body["options"]


@pytest.mark.parametrize(
    ("obj", "status", "shown"),
    [
        ("progress", STATUS_RUNNING, "45"),
        ("time_left", STATUS_RUNNING, "1.07"),
        ("time_left", STATUS_IDLE, "0"),
        ("firmware", STATUS_RUNNING, "ON"),
        ("firmware", STATUS_IDLE, "OFF"),
        ("last_error", STATUS_IDLE, "none"),
        ("last_error", STATUS_FAILED, "scan_invalid"),
    ],
)
def test_sensor_templates_render_the_status(obj: str, status: dict[str, Any], shown: str) -> None:
    _, body = CONFIGS_BY_OBJECT[obj]
    assert body["state_topic"] == "cuberobot/six-motor/status"
    assert render(body["value_template"], status) == shown


def test_numeric_sensors_have_state_classes() -> None:
    assert CONFIGS_BY_OBJECT["progress"][1]["state_class"] == "measurement"
    assert CONFIGS_BY_OBJECT["time_left"][1]["device_class"] == "duration"
    assert CONFIGS_BY_OBJECT["firmware"] == (
        "binary_sensor",
        CONFIGS_BY_OBJECT["firmware"][1] | {"device_class": "connectivity"},
    )


def test_last_reply_shows_a_refused_command() -> None:
    _, body = CONFIGS_BY_OBJECT["last_reply"]
    assert body["state_topic"] == "cuberobot/six-motor/reply"
    refused = {"ok": False, "verb": "start", "error": {"code": "busy", "message": "a job runs"}}
    assert render(body["value_template"], refused) == "start: busy - a job runs"
    assert render(body["value_template"], {"ok": True, "verb": "home"}) == "home: ok"


@pytest.mark.parametrize("event", ["done", "error", "aborted"])
def test_event_entities_render_an_event_type(event: str) -> None:
    component, body = CONFIGS_BY_OBJECT[f"job_{event}"]
    assert component == "event" and body["event_types"] == [event]
    assert body["state_topic"] == f"cuberobot/six-motor/event/{event}"
    payload = {"event": event, "job_id": "j1", "code": "x", "message": 'a "quoted" msg'}
    rendered = json.loads(render(body["value_template"], payload))
    assert rendered["event_type"] == event and rendered["message"] == 'a "quoted" msg'
    done = json.loads(render(body["value_template"], {"event": event, "job_id": "j2"}))
    assert done == {"event_type": event, "job_id": "j2", "code": "", "message": ""}


def test_buttons_publish_commands_the_daemon_accepts() -> None:
    buttons = {o: b for o, (c, b) in CONFIGS_BY_OBJECT.items() if c == "button"}
    plain = {"start", "scan", "home", "abort", "estop", "resume"}
    assert set(buttons) == plain | {"resume_rescan"}  # a six-face robot: no start_pose
    for obj, body in buttons.items():
        verb = body["command_topic"].rsplit("/", 1)[1]
        assert body["command_topic"] == f"cuberobot/six-motor/cmd/{verb}"
        parse_command(verb, body["payload_press"])  # the daemon accepts it
        if obj in plain:
            assert verb == obj and json.loads(body["payload_press"]) == {"source": "homeassistant"}
    assert json.loads(buttons["resume_rescan"]["payload_press"]) == {
        "rescan": True,
        "source": "homeassistant",
    }


def test_a_turntable_robot_gets_a_start_pose_button() -> None:
    config = load_config(CONFIGS / "turntable.toml")
    buttons = {
        topic.split("/")[-2]: json.loads(payload)
        for topic, payload in discovery_configs(config, "9.9.9")
        if topic.split("/")[1] == "button"
    }
    body = buttons["start_pose"]
    assert body["command_topic"].endswith("/cmd/start")
    command = parse_command("start", body["payload_press"])
    assert isinstance(command, NewJobCommand) and command.start_pose


def test_discovery_topics_cover_every_config() -> None:
    assert discovery_topics(CONFIG) == [t for t, _ in discovery_configs(CONFIG, "")]
