"""Test helpers shared by tests and benchmarks."""
