"""Sandbox: a local imitation of the national services, for tests and demos."""
