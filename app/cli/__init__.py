"""Headless command line: the same services as the GUI, for scripts, servers and tests."""
