"""Decimals where the venue takes decimal strings, and which library the package loaded.
No network: order_serialize returns the exact body new_order would sign and send."""

import decimal
import json
import os
import pathlib
import re
from decimal import Decimal

import pytest

import perps

ROOT = pathlib.Path(__file__).resolve().parents[3]

ORDER = {
    "symbol": "BTC-USD",
    "side": "buy",
    "order_type": "limit",
    "qty": "0.01",
    "price": "65000",
    "time_in_force": "gtc",
    "reduce_only": False,
}


def serialized(**fields):
    return json.loads(perps.order_serialize({**ORDER, **fields}))


def test_decimal_fields_are_sent_as_the_same_strings():
    as_strings = perps.order_serialize(ORDER)
    as_decimals = perps.order_serialize({**ORDER, "qty": Decimal("0.01"), "price": Decimal("65000")})
    assert as_decimals == as_strings


def test_nested_decimals():
    # Any depth, lists included (the endpoints' objects may nest).
    assert perps._calls._decimals_as_text("x", {"a": [Decimal("1E+2"), {"b": Decimal("2.50")}], "c": 1.5}) == {
        "a": ["100", {"b": "2.50"}],
        "c": 1.5,
    }


@pytest.mark.parametrize(
    "value, text",
    [
        (Decimal("1E-2"), "0.01"),  # never "1E-2"
        (Decimal("6.5E+4"), "65000"),  # never "6.5E+4"
        (Decimal("0.010"), "0.010"),  # the digits as given
        (Decimal("65000.5"), "65000.5"),
    ],
)
def test_decimal_plain_notation(value, text):
    assert perps._calls._decimal_text("price", value) == text
    assert serialized(price=value)["price"] == text


def test_decimal_never_goes_through_float():
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        qty = Decimal(1) / Decimal(3)  # 50 digits: a float would keep 17
    assert perps._calls._decimal_text("qty", qty) == "0." + "3" * 50


@pytest.mark.parametrize("value", [Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity"), Decimal("sNaN")])
def test_non_finite_decimals_are_refused(value):
    with pytest.raises(perps.PerpsError) as e:
        perps.order_serialize({**ORDER, "price": value})
    assert e.value.code == perps.Code.INVALID_ARGUMENT
    assert e.value.message == f"order.price is {value}, not a finite decimal"


def test_decimal_argument_helper():
    # The one conversion the methods taking a decimal string use (_decimal_arg).
    assert perps._calls._decimal_arg("price", Decimal("1E+1")) == b"10"
    assert perps._calls._decimal_arg("price", "10.5") == b"10.5"
    assert perps._calls._decimal_arg("price", None, optional=True) is None
    with pytest.raises(TypeError):
        perps._calls._decimal_arg("price", 10.5)  # floats are not converted


def test_other_objects_are_a_type_error():
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        perps.order_serialize({**ORDER, "qty": {1}})


def test_version_soname_and_library():
    cargo = (ROOT / "Cargo.toml").read_text()
    version = re.search(r'^version\s*=\s*"([^"]+)"', cargo, re.M).group(1)
    assert perps.__version__ == version == perps.version()
    major, minor = version.split(".")[:2]
    assert perps.SONAME == (f"libperps.so.0.{minor}" if major == "0" else f"libperps.so.{major}")
    # run.sh sets PERPS_LIB: that exact file is what was loaded.
    assert perps.library == os.environ["PERPS_LIB"]
