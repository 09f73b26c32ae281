"""The tests' keyring: a plaintext file in the test's tmp folder.

A subclass of keyrings.alt's PlaintextKeyring defined here, because the vault refuses the
keyrings.alt backends themselves (keyring would pick one automatically on a machine without a
Secret Service, putting certificate secrets in a plain file). Subprocesses of tests select it
with ``PYTHON_KEYRING_BACKEND=tests.support.test_keyring.TestKeyring``.
"""

from __future__ import annotations

import os
from functools import cached_property

from keyrings.alt.file import PlaintextKeyring

BACKEND = "tests.support.test_keyring.TestKeyring"


class TestKeyring(PlaintextKeyring):  # type: ignore[misc]
    """PlaintextKeyring under another name, its file under XDG_DATA_HOME (a tmp folder in tests)."""

    __test__ = False  # not a pytest test class

    @cached_property
    def file_path(self) -> str:
        """Under XDG_DATA_HOME on every platform. keyring's own choice on Windows is the user's
        LOCALAPPDATA, whatever XDG_DATA_HOME says: there two workstations' processes in one test
        shared one file (the second ``company add`` overwrote the first's vault secret) and every
        test of a run saw the others' secrets. A test may still set ``file_path`` itself."""
        root = os.environ.get("XDG_DATA_HOME")
        if not root:
            return str(super().file_path)
        return os.path.join(root, "python_keyring", self.filename)
