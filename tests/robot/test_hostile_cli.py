"""Hostile input at the command line and in profiles (2026-11-27, evening sweep): each case
here was a traceback, a hang or a silent misuse before; now it is a clear error with its
place and the documented exit code. See docs/security.md, "Hostile input"."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from robot.cli import main
from robot.config import load_config
from robot.errors import ConfigError

SIMULATED = Path(__file__).resolve().parents[2] / "configs" / "simulated.toml"
FIVE_MOTOR = Path(__file__).resolve().parents[2] / "configs" / "five_motor.toml"
REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    """A ``cuberobot`` process (a test that would read forever must not take pytest's memory)."""
    return subprocess.run(
        [sys.executable, "-m", "robot.cli", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


# --- solve --batch ------------------------------------------------------------------------------


def test_a_batch_line_longer_than_any_cube_is_refused_with_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "batch.txt"
    path.write_text("U" * 54 + "\n" + "U" * 300_000 + "\n")
    code, out, err = run(capsys, "solve", "--batch", str(path))
    assert code == 2
    assert out.count("\n") == 1  # line 1 (solved) was answered before
    assert "line 2" in err and "longer than" in err
    assert "Traceback" not in err


def test_a_batch_from_an_endless_device_is_refused_not_read_forever() -> None:
    """``/dev/zero`` has no line end: reading its first line used to take all memory."""
    proc = _cli("solve", "--batch", "/dev/zero")
    assert proc.returncode == 2
    assert "line 1" in proc.stderr and "longer than" in proc.stderr


# --- profiles -----------------------------------------------------------------------------------


def _profile(tmp_path: Path, old: str, new: str, source: Path = SIMULATED) -> Path:
    text = source.read_text()
    assert old in text
    path = tmp_path / "robot.toml"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize(
    ("old", "new", "section", "key"),
    [
        pytest.param(
            'path = "sim-journal.sqlite"', f'path = "{"j" * 300}"', "journal", "path", id="journal"
        ),
        pytest.param(
            'scheme = "white-green"',
            f'scheme = "white-green"\ncalibration_file = "{"c" * 300}"',
            "colours",
            "calibration_file",
            id="colours",
        ),
        pytest.param(
            'faces = ["U", "F", "R"]',
            f'faces = ["U", "F", "R"]\ncalibration = "{"c" * 300}.toml"',
            "cameras[upper]",
            "calibration",
            id="camera",
        ),
    ],
)
def test_a_file_name_too_long_for_the_system_is_a_config_error_at_its_key(
    tmp_path: Path, old: str, new: str, section: str, key: str
) -> None:
    path = _profile(tmp_path, old, new)
    with pytest.raises(ConfigError, match="too long") as info:
        load_config(path)
    assert (info.value.section, info.value.key) == (section, key)


def test_config_check_names_a_journal_path_too_long(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _profile(tmp_path, 'path = "sim-journal.sqlite"', f'path = "{"j" * 300}"')
    code, _, err = run(capsys, "config", "check", str(path))
    assert code == 2
    assert "[journal] path" in err and "too long" in err


@pytest.mark.parametrize("command", [("config", "check"), ("run", "--config")])
def test_a_profile_that_is_a_device_is_refused_unread(command: tuple[str, str]) -> None:
    """``/dev/zero`` was read until memory ran out (``run`` never said what was wrong)."""
    proc = _cli(*command, "/dev/zero")
    assert proc.returncode == 2
    assert "/dev/zero" in proc.stderr and "not a regular file" in proc.stderr


def test_a_profile_that_is_a_fifo_is_refused_without_waiting_for_a_writer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fifo = tmp_path / "robot.toml"
    os.mkfifo(fifo)
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(main(["config", "check", str(fifo)])))
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader so that the test run can end, then fail
        with open(fifo, "w"):
            pass
        worker.join(10)
        pytest.fail("config check waited for a writer on a FIFO")
    assert done == [2]
    assert "not a regular file" in capsys.readouterr().err


def test_a_journal_path_that_is_a_fifo_is_a_config_error(tmp_path: Path) -> None:
    """SQLite opened it and failed with "disk I/O error": the daemon did not start and did not
    say why."""
    os.mkfifo(tmp_path / "journal.sqlite")
    path = _profile(tmp_path, 'path = "sim-journal.sqlite"', 'path = "journal.sqlite"')
    with pytest.raises(ConfigError, match="not a regular file") as info:
        load_config(path)
    assert (info.value.section, info.value.key) == ("journal", "path")


@pytest.mark.parametrize("key", ["width", "height"])
def test_a_camera_frame_larger_than_vision_reads_is_refused_at_its_key(
    tmp_path: Path, key: str
) -> None:
    """100,000 px a side passed: a simulated camera would have rendered a 240 GB frame."""
    path = _profile(
        tmp_path, "width = 960" if key == "width" else "height = 720", f"{key} = 100000"
    )
    with pytest.raises(ConfigError, match="8000") as info:
        load_config(path)
    assert info.value.key == key


@pytest.mark.parametrize(
    ("old", "new", "section", "key"),
    [
        pytest.param(
            'base_topic = "cuberobot"',
            f'base_topic = "{"t" * 70_000}"',
            "mqtt",
            "base_topic",
            id="base-topic",
        ),
        pytest.param(
            "[mqtt.discovery]\nenabled = true",
            f'[mqtt.discovery]\nenabled = true\nprefix = "{"h" * 70_000}"',
            "mqtt.discovery",
            "prefix",
            id="discovery-prefix",
        ),
        pytest.param(
            'host = ""',
            f'host = ""\nclient_id = "{"c" * 70_000}"',
            "mqtt",
            "client_id",
            id="client-id",
        ),
    ],
)
def test_an_mqtt_text_longer_than_mqtt_carries_is_refused_at_its_key(
    tmp_path: Path, old: str, new: str, section: str, key: str
) -> None:
    """A base topic of 70,000 characters passed the check and ended ``run`` at start with a
    ``struct.error`` traceback (a topic is at most 65,535 bytes)."""
    path = _profile(tmp_path, old, new)
    with pytest.raises(ConfigError, match="1024 characters") as info:
        load_config(path)
    assert (info.value.section, info.value.key) == (section, key)


@pytest.mark.parametrize("prefix", ["ha/#", "ha/+/x", "", "/ha", "ha/"])
def test_a_discovery_prefix_that_is_no_topic_prefix_is_refused_at_its_key(
    tmp_path: Path, prefix: str
) -> None:
    """``prefix = "ha/#"`` passed the check; ``run`` then ended at start with a traceback
    (ValueError: Invalid subscription filter)."""
    path = _profile(
        tmp_path,
        "[mqtt.discovery]\nenabled = true",
        f'[mqtt.discovery]\nenabled = true\nprefix = "{prefix}"',
    )
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert (info.value.section, info.value.key) == ("mqtt.discovery", "prefix")


@pytest.mark.parametrize(
    ("old", "new", "section", "key"),
    [
        pytest.param('host = ""', f'host = "{"h" * 300}"', "mqtt", "host", id="mqtt-host"),
        pytest.param(
            'host = ""',
            'host = ""\nembedded_host = "a..b"',
            "mqtt",
            "embedded_host",
            id="embedded-host",
        ),
        pytest.param(
            "[journal]",
            f'[web]\nhost = "{"w" * 64}.local"\n\n[journal]',
            "web",
            "host",
            id="web-host",
        ),
    ],
)
def test_a_host_name_the_resolver_cannot_take_is_refused_at_its_key(
    tmp_path: Path, old: str, new: str, section: str, key: str
) -> None:
    """A label over 63 characters passed the check and ended ``run`` at start with a
    UnicodeError traceback (the 'idna' codec)."""
    path = _profile(tmp_path, old, new)
    with pytest.raises(ConfigError, match="not a host name") as info:
        load_config(path)
    assert (info.value.section, info.value.key) == (section, key)


def test_mqtt_option_with_a_host_name_too_long_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["abort", "--config", "simulated", "--mqtt", "h" * 70 + ":1883"])
    assert info.value.code == 2
    assert "1..63 characters" in capsys.readouterr().err


def test_run_with_a_web_host_not_of_this_computer_says_so(tmp_path: Path) -> None:
    """``[web] host = "256.1.1.1"`` ended ``run`` with an OSError traceback."""
    path = _profile(
        tmp_path,
        "[journal]",
        '[web]\nenabled = true\nhost = "256.1.1.1"\nport = 0\n\n[journal]',
    )
    proc = _cli("run", "--config", str(path))
    assert proc.returncode == 1
    assert "[web] host" in proc.stderr and "Traceback" not in proc.stderr


def test_a_password_file_longer_than_mqtt_carries_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("p" * 70_000)
    path = _profile(tmp_path, 'host = ""', 'host = ""\nusername = "robot"\npassword_file = "pw"')
    with pytest.raises(ConfigError, match="larger than") as info:
        load_config(path)
    assert (info.value.section, info.value.key) == ("mqtt", "password_file")


def test_a_huge_profile_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "robot.toml"
    path.write_text(SIMULATED.read_text() + "#" * (2 << 20))
    with pytest.raises(ConfigError, match="larger than"):
        load_config(path)


def test_a_password_file_that_is_a_device_is_refused_at_its_key(tmp_path: Path) -> None:
    """``password_file = "/dev/zero"`` was read until memory ran out."""
    path = _profile(
        tmp_path, 'host = ""', 'host = ""\nusername = "robot"\npassword_file = "/dev/zero"'
    )
    with pytest.raises(ConfigError, match="not a regular file") as info:
        load_config(path)
    assert (info.value.section, info.value.key) == ("mqtt", "password_file")


def test_demo_journal_name_too_long_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["demo", "--journal", "j" * 300])
    assert info.value.code == 2
    assert "too long" in capsys.readouterr().err


def test_demo_journal_that_is_a_fifo_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """SQLite failed on it with "disk I/O error" after the demo had started its robot."""
    fifo = tmp_path / "journal.sqlite"
    os.mkfifo(fifo)
    with pytest.raises(SystemExit) as info:
        main(["demo", "--journal", str(fifo)])
    assert info.value.code == 2
    assert "not a regular file" in capsys.readouterr().err


def test_config_check_of_a_name_too_long_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "config", "check", "p" * 300)
    assert code == 2
    assert "too long" in err


@pytest.mark.parametrize("key", ["quarter_turn_s", "half_turn_s", "pair_extra_s", "settle_s"])
def test_a_robot_time_beyond_a_minute_is_refused_at_its_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key: str
) -> None:
    """1e308 s passed the check: the five-motor planner's sums overflowed to inf and
    ``config check`` ended with a LookupError traceback."""
    text = FIVE_MOTOR.read_text()
    assert "[solver.cost]" in text
    path = tmp_path / "robot.toml"
    lines = [
        f"{key} = 1e308" if line.startswith(f"{key} =") else line for line in text.splitlines()
    ]
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "config", "check", str(path))
    assert code == 2
    assert f"[solver.cost] {key}" in err
    assert "Traceback" not in err


def test_cli_cost_beyond_a_minute_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["solve", "--scramble", "R", "--robot-time", "--cost", "1e308,0.1,0.1,0.1"])
    assert info.value.code == 2
    assert "quarter_turn_s" in capsys.readouterr().err


# --- firmware-sim -------------------------------------------------------------------------------


@pytest.mark.parametrize("speed", ["1e-300", "inf", "1e300", "-inf"])
def test_firmware_sim_speed_out_of_range_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], speed: str
) -> None:
    """1e-300 was a ValueError traceback (acceleration 0), inf was taken."""
    with pytest.raises(SystemExit) as info:
        main(["firmware-sim", "--tcp", "0", "--speed", speed])
    assert info.value.code == 2
    assert "--speed" in capsys.readouterr().err


def test_firmware_sim_state_file_never_replaces_a_device(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The state file is written atomically (a new file renamed over it): given a device such
    as /dev/full it replaced the device node with a text file (as root)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(SystemExit) as info:
        main(["firmware-sim", "--tcp", "0", "--state-file", str(fifo)])
    assert info.value.code == 2
    assert "not a regular file" in capsys.readouterr().err
    assert stat.S_ISFIFO(fifo.stat().st_mode)
