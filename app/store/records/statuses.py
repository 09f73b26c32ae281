"""The states the store keeps of its work: gap recoveries, manifestations, runs, government calls."""

from __future__ import annotations

from enum import StrEnum


class GapStatus(StrEnum):
    PENDING = "pending"
    RECOVERED = "recovered"
    NOT_FOUND = "not_found"  # 137 for that NSU: it never existed
    ABANDONED = "abandoned"  # attempts exhausted


class ManifestationStatus(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class RunStatus(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"
    INTERRUPTED = "interrupted"  # the app stopped while it ran


class CallOutcome(StrEnum):
    OK = "ok"  # the service answered (any cStat)
    REJECTED = "rejected"  # answered with a rejection
    HTTP_ERROR = "http_error"
    NETWORK_ERROR = "network_error"
    TIMEOUT = "timeout"
