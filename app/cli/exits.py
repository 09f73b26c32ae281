"""The command line's exit codes (a module of their own: the commands import them, not ``main``).

0 success, 1 a refusal the user can act on (message on stderr), 2 wrong usage, 3 nothing more to
do now: accepted but waiting (a manifestation left pending, every company of ``capture --once``
in a wait), 130 interrupted (Ctrl+C).
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_WAITING = 3
EXIT_INTERRUPTED = 130
