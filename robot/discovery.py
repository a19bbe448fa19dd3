"""Home Assistant MQTT discovery for one robot: what a dashboard shows without any YAML.

One device per robot (``identifiers: cuberobot_<id>``) with an ``origin`` block, entities
published retained under ``<prefix>/<component>/<node>/<object>/config`` following the current
discovery schema (``default_entity_id`` = ``<domain>.cuberobot_<node>_<object>``; the old
``object_id`` is gone from Home Assistant):

=============  ===============  ==============================================================
component      object           what it shows / does
=============  ===============  ==============================================================
sensor         state            the daemon's state, an ``enum`` sensor with its options
sensor         progress         % of the job's moves done (``state_class: measurement``)
sensor         time_left        seconds left (``device_class: duration``)
sensor         last_error       the last error's code (``none``), message and details as
                                attributes
sensor         last_reply       the last command reply (``<verb>: ok`` or its error), so a
                                refused button press is visible
binary_sensor  firmware         firmware link (``device_class: connectivity``)
event          job_done         fires when a job ends solved (``event/done``)
event          job_error        fires when a job fails (``event/error``)
event          job_aborted      fires when a job is aborted or e-stopped (``event/aborted``)
button         start, scan,     publish the command (``{"source": "homeassistant"}``)
               home, abort,
               estop, resume
button         resume_rescan    ``resume`` with ``{"rescan": true}``
button         start_pose       turntable and gripper robots: ``start`` with
                                ``{"start_pose": true}`` (after a ``parts_unknown`` refusal)
=============  ===============  ==============================================================

:func:`discovery_topics` lists the topics whose retained config an empty payload removes (a
demo run cleans up after itself).
"""

from __future__ import annotations

import json
from typing import Any

from robot.config import RobotConfig

__all__ = ["DAEMON_STATES", "discovery_configs", "discovery_topics"]

#: the daemon's states, the options of the State sensor (checked against the daemon's enum by
#: a test; kept here so that discovery does not import the daemon)
DAEMON_STATES = (
    "PREPARING",
    "IDLE",
    "SCANNING",
    "VALIDATING",
    "SOLVING",
    "EXECUTING",
    "DONE",
    "ERROR",
    "ABORTED",
)


def _node(config: RobotConfig) -> str:
    return config.robot.id.replace("-", "_")


def _entities(config: RobotConfig) -> list[tuple[str, str, dict[str, Any]]]:
    status = config.topic("status")
    sensors: list[tuple[str, str, dict[str, Any]]] = [
        (
            "sensor",
            "state",
            {
                "name": "State",
                "state_topic": status,
                "value_template": "{{ value_json.state }}",
                "device_class": "enum",
                "options": list(DAEMON_STATES),
                "json_attributes_topic": status,
                "icon": "mdi:cube-outline",
            },
        ),
        (
            "sensor",
            "progress",
            {
                "name": "Progress",
                "state_topic": status,
                "value_template": "{{ value_json.progress }}",
                "unit_of_measurement": "%",
                "state_class": "measurement",
                "icon": "mdi:progress-check",
            },
        ),
        (
            "sensor",
            "time_left",
            {
                "name": "Time left",
                "state_topic": status,
                "value_template": "{{ value_json.eta_s if value_json.eta_s is not none else 0 }}",
                "unit_of_measurement": "s",
                "device_class": "duration",
                "state_class": "measurement",
            },
        ),
        (
            "sensor",
            "last_error",
            {
                "name": "Last error",
                "state_topic": status,
                "value_template": "{{ value_json.error.code if value_json.error else 'none' }}",
                "json_attributes_topic": status,
                "json_attributes_template": "{{ (value_json.error or {}) | tojson }}",
                "icon": "mdi:alert-circle-outline",
            },
        ),
        (
            "sensor",
            "last_reply",
            {
                "name": "Last command reply",
                "state_topic": config.topic("reply"),
                "value_template": (
                    "{{ value_json.verb }}: {{ 'ok' if value_json.ok else "
                    "value_json.error.code ~ ' - ' ~ value_json.error.message }}"
                ),
                "json_attributes_topic": config.topic("reply"),
                "icon": "mdi:message-reply-text-outline",
            },
        ),
        (
            "binary_sensor",
            "firmware",
            {
                "name": "Firmware",
                "state_topic": status,
                "value_template": "{{ 'ON' if value_json.firmware.connected else 'OFF' }}",
                "device_class": "connectivity",
            },
        ),
    ]
    events = [
        ("event", f"job_{name}", _event(config, event, name, label))
        for event, name, label in (
            ("done", "done", "Job done"),
            ("error", "error", "Job error"),
            ("aborted", "aborted", "Job aborted"),
        )
    ]
    presses: list[tuple[str, str, str, str, dict[str, Any]]] = [
        ("start", "start", "Start", "mdi:play", {}),
        ("scan", "scan", "Scan", "mdi:camera", {}),
        ("home", "home", "Home", "mdi:home", {}),
        ("abort", "abort", "Abort", "mdi:stop", {}),
        ("estop", "estop", "Emergency stop", "mdi:alert-octagon", {}),
        ("resume", "resume", "Resume", "mdi:play-pause", {}),
        (
            "resume_rescan",
            "resume",
            "Resume with a fresh scan",
            "mdi:camera-retake",
            {"rescan": True},
        ),
    ]
    if config.robot.kind != "six-face":  # the answer to a parts_unknown refusal
        presses.append(
            (
                "start_pose",
                "start",
                "Start from the start pose",
                "mdi:restore",
                {"start_pose": True},
            )
        )
    buttons = [
        (
            "button",
            obj,
            {
                "name": label,
                "command_topic": config.topic("cmd", verb),
                "payload_press": json.dumps({**extra, "source": "homeassistant"}),
                "icon": icon,
            },
        )
        for obj, verb, label, icon, extra in presses
    ]
    return sensors + events + buttons


def _event(config: RobotConfig, event: str, name: str, label: str) -> dict[str, Any]:
    return {
        "name": label,
        "state_topic": config.topic("event", event),
        "event_types": [name],
        # the event's payload becomes the entity's attributes, with the event type HA needs
        "value_template": (
            '{"event_type": "' + name + '", "job_id": {{ value_json.get("job_id") | tojson }}, '
            '"code": {{ (value_json.get("code") or "") | tojson }}, '
            '"message": {{ (value_json.get("message") or "") | tojson }}}'
        ),
    }


def discovery_configs(config: RobotConfig, sw_version: str) -> list[tuple[str, bytes]]:
    """(topic, retained payload) of every entity's discovery config."""
    prefix = config.mqtt.discovery.prefix
    node = _node(config)
    device = {
        "identifiers": [f"cuberobot_{node}"],
        "name": config.robot.name,
        "manufacturer": "cuberobot",
        "model": f"{len(config.motors.faces)}-motor cube robot (N={config.robot.cube_size})",
        "sw_version": sw_version,
    }
    common = {
        "availability_topic": config.topic("availability"),
        "payload_available": "online",
        "payload_not_available": "offline",
        "device": device,
        "origin": {"name": "cuberobot", "sw_version": sw_version},
    }
    out = []
    for component, obj, body in _entities(config):
        unique = f"cuberobot_{node}_{obj}"
        payload = {
            **body,
            **common,
            "unique_id": unique,
            "default_entity_id": f"{component}.{unique}",
        }
        text = json.dumps(payload, separators=(",", ":")).encode()
        out.append((f"{prefix}/{component}/{node}/{obj}/config", text))
    return out


def discovery_topics(config: RobotConfig) -> list[str]:
    """The discovery topics to publish an empty retained payload to (removes the device)."""
    return [topic for topic, _ in discovery_configs(config, "")]
