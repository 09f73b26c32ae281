"""Plain values that cross the store's boundary: enums and frozen dataclasses.

No SQLAlchemy type appears here, so engines, the UI and other threads can hold these freely.
Enum values are what the database stores. One module per subject; every name is importable from
``app.store.records`` as before.
"""

from __future__ import annotations

from app.core.cadence import CaptureState as CaptureState  # pure domain state, stored as is

# Re-exported: the store speaks the domain's enums.
from app.core.documents import Direction as Direction
from app.core.documents import DocumentKind as DocumentKind
from app.core.documents import DocumentStatus as DocumentStatus
from app.core.documents import PartyRole as PartyRole
from app.core.manifestation import ManifestationState as ManifestationState
from app.core.products import Environment as Environment
from app.core.products import Product as Product
from app.store.records.companies import (
    CaptureSettings as CaptureSettings,
)
from app.store.records.companies import (
    Company as Company,
)
from app.store.records.companies import (
    ServicePause as ServicePause,
)
from app.store.records.documents import (
    KIND_RANK as KIND_RANK,
)
from app.store.records.documents import (
    DocumentInput as DocumentInput,
)
from app.store.records.documents import (
    DocumentSummary as DocumentSummary,
)
from app.store.records.documents import (
    DocumentVersionInfo as DocumentVersionInfo,
)
from app.store.records.documents import (
    NfseDetails as NfseDetails,
)
from app.store.records.documents import (
    Party as Party,
)
from app.store.records.documents import (
    StoredDocument as StoredDocument,
)
from app.store.records.documents import (
    Withheld as Withheld,
)
from app.store.records.events import (
    EventInput as EventInput,
)
from app.store.records.events import (
    EventRecord as EventRecord,
)
from app.store.records.events import (
    StoredEvent as StoredEvent,
)
from app.store.records.exports import (
    CANCELLED_MODES as CANCELLED_MODES,
)
from app.store.records.exports import (
    EXPORT_KINDS as EXPORT_KINDS,
)
from app.store.records.exports import (
    ExportProfile as ExportProfile,
)
from app.store.records.queries import (
    DocumentQuery as DocumentQuery,
)
from app.store.records.queries import (
    GridQuery as GridQuery,
)
from app.store.records.queries import (
    GridSort as GridSort,
)
from app.store.records.queries import (
    KeyEventFacts as KeyEventFacts,
)
from app.store.records.queries import (
    KeyEvents as KeyEvents,
)
from app.store.records.queries import (
    RowKind as RowKind,
)
from app.store.records.statuses import (
    CallOutcome as CallOutcome,
)
from app.store.records.statuses import (
    GapStatus as GapStatus,
)
from app.store.records.statuses import (
    ManifestationStatus as ManifestationStatus,
)
from app.store.records.statuses import (
    RunStatus as RunStatus,
)
from app.store.records.work import (
    CallRecord as CallRecord,
)
from app.store.records.work import (
    GapLedgerLine as GapLedgerLine,
)
from app.store.records.work import (
    GapRecovery as GapRecovery,
)
from app.store.records.work import (
    Manifestation as Manifestation,
)
from app.store.records.work import (
    PruneResult as PruneResult,
)
from app.store.records.work import (
    Run as Run,
)
