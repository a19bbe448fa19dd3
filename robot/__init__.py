"""The robot: daemon, planner, configuration, MQTT, journal, CLI and the simulated robot."""
