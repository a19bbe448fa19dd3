"""Profile values that used to pass ``config check`` and crash ``run``: refused at load."""

from __future__ import annotations

import pytest

from robot.config import parse_config
from robot.errors import ConfigError


@pytest.mark.parametrize(
    ("faults", "words"),
    [
        pytest.param("reset_at=12", "unknown fault 'reset_at'", id="the-old-example"),
        pytest.param("stall=Q@3", "motor 'Q'", id="bad-motor"),
        pytest.param("flip=2", "flip", id="probability-above-1"),
        pytest.param("nonsense", "not understood", id="no-equals"),
    ],
)
def test_simulation_faults_are_parsed_at_load(faults: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as info:
        parse_config({"serial": {"url": "sim"}, "simulation": {"faults": faults}}, "p.toml")
    assert (info.value.section, info.value.key) == ("simulation", "faults")


def test_the_documented_fault_syntax_loads() -> None:
    config = parse_config(
        {"serial": {"url": "sim"}, "simulation": {"faults": "reset@12,drop=1e-3,stall=U@7"}},
        "p.toml",
    )
    assert config.simulation is not None and config.simulation.faults.startswith("reset@12")
