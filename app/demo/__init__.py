"""The built-in demonstration: the sandbox and the capture service on a sped-up clock."""
