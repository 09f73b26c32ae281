"""The tests' keyring: a plaintext file in the test's tmp folder.

A subclass of keyrings.alt's PlaintextKeyring defined here, because the vault refuses the
keyrings.alt backends themselves (keyring would pick one automatically on a machine without a
Secret Service, putting certificate secrets in a plain file). Subprocesses of tests select it
with ``PYTHON_KEYRING_BACKEND=tests.support.test_keyring.TestKeyring``.
"""

from __future__ import annotations

from keyrings.alt.file import PlaintextKeyring

BACKEND = "tests.support.test_keyring.TestKeyring"


class TestKeyring(PlaintextKeyring):  # type: ignore[misc]
    """PlaintextKeyring under another name (its file under XDG_DATA_HOME, a tmp folder in tests)."""

    __test__ = False  # not a pytest test class
