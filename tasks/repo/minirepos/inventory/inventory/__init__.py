"""inventory: a stock ledger with reservations and valuation."""

from inventory.ledger import InsufficientStock, Ledger

__all__ = ["InsufficientStock", "Ledger"]
