"""Tables as comparable values: rows as JSON-ready dicts in a stable order, with the columns that
depend on when a run ran dropped (the crash harness's dumps, the crash and cluster tests)."""

from __future__ import annotations

import json
import re
from typing import Any

# Columns holding when a run ran or a message was landed (the two runs land at different times),
# and the lags measured from those times (cdc_lag).
VOLATILE = re.compile(
    r"(^|_)(applied|loaded|ingested|processed|first_fragment|last_fragment|main_record)_at$|_lag_ms_"
)


def stable(value: Any) -> Any:
    """Drop run-time columns, at any depth."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if not VOLATILE.search(k)}
    if isinstance(value, list):
        return sorted((stable(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, default=str))
    return value


def rows(spark: Any, sql: str) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts, in a stable order."""
    out = [json.loads(json.dumps(r.asDict(recursive=True), default=str)) for r in spark.sql(sql).collect()]
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))
