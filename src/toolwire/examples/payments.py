"""A side-effecting sample tool: payments that happen at most once per key.

Theory of operation: :class:`PaymentLedger` records each payment under the
call's idempotency key (``ToolContext.idempotency_key``). Paying again with a
key already recorded does not pay twice: it returns the recorded payment with
``status: "already_sent"``. The same key for a *different* payment is refused.
Because the key is stable across retries and, through a journal, across a
crash and resume, a retried or replayed call cannot send money twice.

The ledger lives in memory, or in a SQLite file so that it outlives a process.
SQLite's primary key makes "insert if absent" atomic, so concurrent calls
(worker threads, several processes) still pay once.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from contextlib import closing
from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import Field

from toolwire.errors import ToolFailed
from toolwire.tools import Tool, ToolContext, tool

__all__ = ["PaymentLedger", "payment_tool"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS payments (
    idempotency_key TEXT PRIMARY KEY,
    payment_id TEXT NOT NULL,
    recipient TEXT NOT NULL,
    amount_cents INTEGER NOT NULL,
    created_at TEXT NOT NULL
)
"""


class PaymentLedger:
    """Where sample payments are recorded, one per idempotency key.

    Args:
        path: a SQLite file (created if missing), or ``None`` to keep the
            ledger in memory.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = os.fspath(path) if path is not None else None
        self._memory: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        if self.path is not None:
            with closing(sqlite3.connect(self.path, timeout=30)) as db, db:
                db.execute(_SCHEMA)

    def pay(self, *, key: str, to: str, amount_cents: int) -> tuple[dict[str, Any], bool]:
        """Record a payment unless ``key`` already paid.

        Args:
            key: the idempotency key of the call.
            to: the recipient.
            amount_cents: the amount, in cents.

        Returns:
            The payment record and whether it was created now.

        Raises:
            ToolFailed: ``key`` already paid a different recipient or amount.
        """
        record = {
            "payment_id": f"pay_{uuid.uuid4().hex[:16]}",
            "to": to,
            "amount_cents": amount_cents,
            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        if self.path is None:
            with self._lock:
                existing = self._memory.get(key)
                if existing is None:
                    self._memory[key] = record
                    return dict(record), True
        else:
            with closing(sqlite3.connect(self.path, timeout=30)) as db, db:
                cursor = db.execute(
                    "INSERT OR IGNORE INTO payments VALUES (?, ?, ?, ?, ?)",
                    (key, record["payment_id"], to, amount_cents, record["created_at"]),
                )
                if cursor.rowcount == 1:
                    return dict(record), True
                row = db.execute(
                    "SELECT payment_id, recipient, amount_cents, created_at FROM payments "
                    "WHERE idempotency_key = ?",
                    (key,),
                ).fetchone()
            existing = {
                "payment_id": row[0],
                "to": row[1],
                "amount_cents": row[2],
                "created_at": row[3],
            }
        if existing["to"] != to or existing["amount_cents"] != amount_cents:
            raise ToolFailed(
                "this idempotency key was already used for a different payment; refusing"
            )
        return dict(existing), False

    def payments(self) -> list[dict[str, Any]]:
        """Every recorded payment, oldest first."""
        if self.path is None:
            with self._lock:
                return [dict(r, idempotency_key=k) for k, r in self._memory.items()]
        with closing(sqlite3.connect(self.path, timeout=30)) as db:
            rows = db.execute(
                "SELECT idempotency_key, payment_id, recipient, amount_cents, created_at "
                "FROM payments ORDER BY rowid"
            ).fetchall()
        return [
            {
                "idempotency_key": r[0],
                "payment_id": r[1],
                "to": r[2],
                "amount_cents": r[3],
                "created_at": r[4],
            }
            for r in rows
        ]

    def __len__(self) -> int:
        return len(self.payments())


def payment_tool(ledger: PaymentLedger, *, requires_approval: bool = False) -> Tool:
    """The ``send_payment`` tool, writing to ``ledger``.

    Args:
        ledger: where payments are recorded.
        requires_approval: ask the toolbox's approver before each payment.
    """

    @tool(name="send_payment", requires_approval=requires_approval, strict=True, idempotent=True)
    def send_payment(
        to: Annotated[str, Field(min_length=1, max_length=100)],
        amount_cents: Annotated[int, Field(gt=0, le=1_000_000)],
        ctx: ToolContext,
    ) -> dict[str, Any]:
        """Send a payment to a recipient. This moves money: only call it when the user asked.

        Args:
            to: Who receives the money (a name or account id).
            amount_cents: The amount in cents, e.g. 1250 for 12.50.
        """
        record, created = ledger.pay(key=ctx.idempotency_key, to=to, amount_cents=amount_cents)
        return {**record, "status": "sent" if created else "already_sent"}

    return send_payment
