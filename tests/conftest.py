"""Shared fixtures are plugins, one module per area, so parallel work never edits the same file."""

pytest_plugins = ["tests.fixtures.offline", "tests.fixtures.browser", "tests.fixtures.webenv", "tests.fixtures.widget_lab"]
