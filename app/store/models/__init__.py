"""Declarative models: the schema. Only the store's repositories touch these classes.

Conventions: every constraint and index has a name (the naming convention below), so Alembic
can compare the models with a migrated database; instants are ``UtcDateTime``; enum columns are
short strings guarded by CHECK constraints; money is integer centavos (SQLite has no decimal
type: ``Numeric`` would round-trip through float, and sums of cents stay exact); XML is zlib
bytes beside the sha256 of the original.

One module per group of tables (``base`` holds what they share); every name is importable from
``app.store.models`` as before, and importing it registers every table on ``Base.metadata``.
"""

from __future__ import annotations

from app.store.models.base import (
    CSTAT_LEN as CSTAT_LEN,
)
from app.store.models.base import (
    ID_LEN as ID_LEN,
)
from app.store.models.base import (
    KEY_LEN as KEY_LEN,
)
from app.store.models.base import (
    NAMING_CONVENTION as NAMING_CONVENTION,
)
from app.store.models.base import (
    NULLABLE_PRODUCT_CHECK as NULLABLE_PRODUCT_CHECK,
)
from app.store.models.base import (
    PRODUCTS_CHECK as PRODUCTS_CHECK,
)
from app.store.models.base import (
    Base as Base,
)
from app.store.models.base import (
    company_fk as company_fk,
)
from app.store.models.companies import (
    CallLeaseRow as CallLeaseRow,
)
from app.store.models.companies import (
    CaptureSettingsRow as CaptureSettingsRow,
)
from app.store.models.companies import (
    CaptureStateRow as CaptureStateRow,
)
from app.store.models.companies import (
    CompanyRow as CompanyRow,
)
from app.store.models.companies import (
    ServicePauseRow as ServicePauseRow,
)
from app.store.models.consumers import (
    OtherConsumerRow as OtherConsumerRow,
)
from app.store.models.documents import (
    CarriedNfeRow as CarriedNfeRow,
)
from app.store.models.documents import (
    DistributionItemRow as DistributionItemRow,
)
from app.store.models.documents import (
    DocumentPartyRow as DocumentPartyRow,
)
from app.store.models.documents import (
    DocumentRow as DocumentRow,
)
from app.store.models.documents import (
    DocumentVersionRow as DocumentVersionRow,
)
from app.store.models.documents import (
    EventRow as EventRow,
)
from app.store.models.documents import (
    NfseDetailsRow as NfseDetailsRow,
)
from app.store.models.exports import (
    ExportProfileRow as ExportProfileRow,
)
from app.store.models.exports import (
    ExportQueueRow as ExportQueueRow,
)
from app.store.models.exports import (
    HandoffDeliveryRow as HandoffDeliveryRow,
)
from app.store.models.exports import (
    HandoffTargetRow as HandoffTargetRow,
)
from app.store.models.node import (
    NodeLeaseRow as NodeLeaseRow,
)
from app.store.models.operations import (
    ArchivedExchangeRow as ArchivedExchangeRow,
)
from app.store.models.operations import (
    GapRecoveryRow as GapRecoveryRow,
)
from app.store.models.operations import (
    GovernmentCallRow as GovernmentCallRow,
)
from app.store.models.operations import (
    ManifestationRow as ManifestationRow,
)
from app.store.models.operations import (
    PointQueryRow as PointQueryRow,
)
from app.store.models.operations import (
    RunRow as RunRow,
)
from app.store.models.operations import (
    SchemaVersionRow as SchemaVersionRow,
)
from app.store.models.reform import (
    DocumentReformItemRow as DocumentReformItemRow,
)
from app.store.models.reform import (
    DocumentReformRow as DocumentReformRow,
)
from app.store.models.reform import (
    NfeReferenceRow as NfeReferenceRow,
)
