import pytest

from inventory import InsufficientStock, Ledger


def make():
    ledger = Ledger()
    ledger.add("bolt", 10, 0.25)
    ledger.add("nut", 4, 0.10)
    return ledger


def test_add_new_needs_price():
    with pytest.raises(ValueError):
        Ledger().add("x", 1)


def test_add_rejects_non_positive():
    with pytest.raises(ValueError):
        make().add("bolt", 0)


def test_reserve_default_is_one_unit():
    ledger = make()
    ledger.reserve("bolt")
    assert ledger.items["bolt"].available == 9


def test_reserve_too_many():
    with pytest.raises(InsufficientStock):
        make().reserve("nut", 5)


def test_ship():
    ledger = make()
    ledger.reserve("bolt", 3)
    ledger.ship("bolt", 2)
    item = ledger.items["bolt"]
    assert (item.on_hand, item.reserved) == (8, 1)


def test_ship_more_than_reserved():
    ledger = make()
    ledger.reserve("bolt", 1)
    with pytest.raises(InsufficientStock):
        ledger.ship("bolt", 2)


def test_value():
    assert make().value() == 2.9


def test_value_without_reserved():
    ledger = make()
    ledger.reserve("bolt", 4)
    assert ledger.value(include_reserved=False) == 1.9


def test_unknown_sku():
    with pytest.raises(KeyError):
        make().ship("washer")
