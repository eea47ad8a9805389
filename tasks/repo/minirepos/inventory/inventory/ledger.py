"""A ledger of items: quantities on hand, reservations, unit prices."""

from __future__ import annotations

from dataclasses import dataclass, field


class InsufficientStock(ValueError):
    pass


@dataclass
class Item:
    sku: str
    unit_price: float
    on_hand: int = 0
    reserved: int = 0

    @property
    def available(self) -> int:
        return self.on_hand - self.reserved


@dataclass
class Ledger:
    items: dict[str, Item] = field(default_factory=dict)

    def add(self, sku: str, quantity: int, unit_price: float | None = None) -> Item:
        """Receive `quantity` units; a new sku needs its unit price."""
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        if sku not in self.items:
            if unit_price is None:
                raise ValueError(f"new sku {sku!r} needs a unit price")
            self.items[sku] = Item(sku, unit_price)
        elif unit_price is not None:
            self.items[sku].unit_price = unit_price
        self.items[sku].on_hand += quantity
        return self.items[sku]

    def reserve(self, sku: str, quantity: int = 1) -> None:
        item = self._item(sku)
        if quantity > item.available:
            raise InsufficientStock(f"{sku}: {quantity} asked, {item.available} available")
        item.reserved += quantity

    def ship(self, sku: str, quantity: int = 1) -> None:
        """Ship reserved units: they leave both the reservation and the stock."""
        item = self._item(sku)
        if quantity > item.reserved:
            raise InsufficientStock(f"{sku}: {quantity} to ship, {item.reserved} reserved")
        item.reserved -= quantity
        item.on_hand -= quantity

    def value(self, *, include_reserved: bool = True) -> float:
        """Stock value at unit prices, rounded to cents."""
        total = 0.0
        for item in self.items.values():
            units = item.on_hand if include_reserved else item.available
            total += units * item.unit_price
        return round(total, 2)

    def _item(self, sku: str) -> Item:
        if sku not in self.items:
            raise KeyError(f"unknown sku {sku!r}")
        return self.items[sku]
