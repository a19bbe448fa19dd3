"""The example robot profiles shipped inside the package, and ``--config`` lookup.

Layout: the profiles live in the repository's ``configs/`` folder (``configs/simulated.toml``,
``six_motor.toml``, ``five_motor.toml``); ``robot/profiles`` is a symbolic link to that folder,
so the wheel and the sdist carry the files as package data of ``robot.profiles`` and an
installed ``cuberobot`` reads them with :mod:`importlib.resources`, wherever it runs from.

A command's ``--config`` (and ``config check FILE``) takes either a file path or the name of a
bundled profile (``simulated``, ``six_motor``, ``five_motor``, ``turntable``,
``bigcube_gripper``, ``two_gripper``); an existing file wins over a
name. A bundled profile's relative paths (its journal file) are resolved against the current
directory, since the package's own folder is not the user's to write in.
"""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path

from robot.config import RobotConfig, load_config, path_problem
from robot.errors import ConfigError

__all__ = ["PACKAGE", "bundled_names", "bundled_path", "load_profile"]

logger = logging.getLogger(__name__)

#: The package whose data files are the bundled profiles.
PACKAGE = "robot.profiles"
_SUFFIX = ".toml"


def bundled_names() -> tuple[str, ...]:
    """The names of the bundled profiles (their file names without ``.toml``), sorted."""
    folder = resources.files(PACKAGE)
    return tuple(
        sorted(
            entry.name.removesuffix(_SUFFIX)
            for entry in folder.iterdir()
            if entry.name.endswith(_SUFFIX) and entry.is_file()
        )
    )


def bundled_path(name: str) -> Path:
    """The file of the bundled profile ``name`` (:class:`ConfigError` for an unknown name).

    The package is installed as plain files (its C extension makes it unzippable), so the
    resource is a real path that :func:`load_config` can open and name in its messages."""
    if name not in bundled_names():
        raise ConfigError(
            f"no profile file or bundled profile of this name; bundled profiles: "
            f"{', '.join(bundled_names())}",
            file=name,
        )
    return Path(str(resources.files(PACKAGE).joinpath(name + _SUFFIX)))


def load_profile(text: str | Path) -> RobotConfig:
    """Load the profile named by a ``--config`` argument: a file path, or a bundled name."""
    path = Path(text)
    names = bundled_names()
    problem = path_problem(path)
    if problem is not None:
        raise ConfigError(problem, file=str(text)[:80])
    if not path.exists() and str(text) not in names:
        raise ConfigError(
            f"cannot read the profile: no such file, nor a bundled profile ({', '.join(names)})",
            file=str(text),
        )
    if path.exists():
        return load_config(path)
    logger.info("bundled profile %s", text)
    return load_config(bundled_path(str(text)), base_dir=Path.cwd())
