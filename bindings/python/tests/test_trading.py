"""The trading loop through the Python binding against the sandbox venue: every endpoint
method called and its answer checked (the public three with session=None), parameters as
dict (Decimal written as plain decimal strings, float refused) or JSON text, an order placed,
found by its generated cl_ord_id, listed, cancelled, and NOT_FOUND on cancelling it again
with the x-request-id the venue received; parameters refused before anything is sent; an
order that times out carrying its cl_ord_id and x_request_id and found afterwards; the
client's rate limiter refusing with retry_after_ms.
"""

import json
import math
import re
import time
from decimal import Decimal

import pytest

import perps
from test_flow import WALLET_KEY, sandbox  # noqa: F401  (sandbox: the fixture)

UUID_V4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def rows(answer):
    """A list answer: a bare array, or the result of a {page_size, result, total} envelope."""
    value = json.loads(answer)
    return value if isinstance(value, list) else value["result"]


def limit_buy(price, qty="0.01", **extra):
    return {
        "symbol": "BTC-USD",
        "side": "buy",
        "order_type": "limit",
        "qty": Decimal(qty),
        "price": Decimal(price),
        "time_in_force": "gtc",
        "reduce_only": False,
        **extra,
    }


def far_bid(client):
    """A price far below the mark (whole dollars), so the moving mark does not fill it."""
    mark = Decimal(json.loads(client.query_symbol_price(None, {"symbol": "BTC-USD"}))["mark_price"])
    return str(math.floor(mark - 2000))


@pytest.fixture
def signed_in(sandbox):  # noqa: F811
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", WALLET_KEY, 3600)
        yield sandbox, client, session


def test_public_endpoints_without_session(sandbox):  # noqa: F811
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client:
        symbols = {s["symbol"] for s in rows(client.query_symbol_info())}
        assert {"BTC-USD", "ETH-USD", "XAG-USD"} <= symbols
        (xag,) = rows(client.query_symbol_info(None, '{"symbol":"XAG-USD"}'))
        assert xag["symbol"] == "XAG-USD" and "price_tick_decimals" in xag
        price = json.loads(client.query_symbol_price(params={"symbol": "BTC-USD"}))
        assert price["symbol"] == "BTC-USD" and Decimal(str(price["mark_price"])) > 0

        # XAG-USD's bids (100.04 … 99.95 around the default mark) sort differently as strings.
        for symbol in ("XAG-USD", "BTC-USD"):
            book = json.loads(client.query_depth_book(None, {"symbol": symbol}))
            bids = [Decimal(str(level[0])) for level in book["bids"]]
            asks = [Decimal(str(level[0])) for level in book["asks"]]
            assert bids and asks and bids[0] < asks[0], book
            assert all(a > b for a, b in zip(bids, bids[1:])), f"bids high to low: {bids}"
            assert all(a < b for a, b in zip(asks, asks[1:])), f"asks low to high: {asks}"
        for name in ("query_symbol_info", "query_symbol_price", "query_depth_book"):
            sent = sandbox.requests(name)
            assert sent and not any("authorization" in r["headers"] for r in sent), name

        # A session is accepted (and not needed); a closed one is refused, not read.
        session = perps.Session()
        assert json.loads(client.query_symbol_price(session, {"symbol": "ETH-USD"}))["symbol"] == "ETH-USD"
        session.close()
        with pytest.raises(perps.PerpsError) as exc:
            client.query_symbol_price(session, {"symbol": "ETH-USD"})
        assert exc.value.code is perps.Code.INVALID_ARGUMENT


def test_trading_loop(signed_in):
    sandbox, client, session = signed_in

    # A market maker's set-up calls.
    assert json.loads(client.change_margin_mode(session, {"symbol": "BTC-USD", "margin_mode": "cross"}))["code"] == 0
    assert json.loads(client.change_leverage(session, '{"symbol":"BTC-USD","leverage":10}'))["code"] == 0
    config = json.loads(client.query_position_config(session, {"symbol": "BTC-USD"}))
    assert int(config["leverage"]) == 10 and config["margin_mode"] == "cross"

    # An order without cl_ord_id: the answer carries the generated one.
    bid = far_bid(client)
    placed = json.loads(client.new_order(session, limit_buy(bid)))
    cl = placed["cl_ord_id"]
    assert placed["code"] == 0 and len(cl) >= 26
    order = json.loads(client.query_order(session, {"cl_ord_id": cl}))
    order_id = order["id"]
    assert isinstance(order_id, int) and order_id > 2**32, order
    assert order["status"] == "open" and order["cl_ord_id"] == cl
    assert Decimal(order["price"]) == Decimal(bid)
    assert json.loads(client.query_order(session, {"order_id": order_id}))["cl_ord_id"] == cl
    assert order_id in [o["id"] for o in rows(client.query_open_orders(session, {"symbol": "BTC-USD"}))]
    assert order_id in [o["id"] for o in rows(client.query_open_orders(session))]

    assert json.loads(client.cancel_order(session, {"cl_ord_id": cl}))["code"] == 0
    assert json.loads(client.query_order(session, {"order_id": order_id}))["status"] == "canceled"
    assert order_id not in [o["id"] for o in rows(client.query_open_orders(session))]
    history = client.query_orders(session, {"symbol": "BTC-USD", "status": "canceled", "limit": 50})
    assert order_id in [o["id"] for o in rows(history)]

    # Cancelling it again: gone, NOT_FOUND, with the x-request-id the venue received.
    with pytest.raises(perps.PerpsError) as exc:
        client.cancel_order(session, {"order_id": order_id})
    e = exc.value
    assert e.code is perps.Code.NOT_FOUND and e.code == 13
    assert e.http_status == 404 and "not found" in e.body
    assert e.cl_ord_id is None and e.retry_after_ms == -1
    assert UUID_V4.match(e.x_request_id), e.x_request_id
    last = sandbox.requests("cancel_order")[-1]
    assert last["headers"]["x-request-id"] == e.x_request_id and last["status"] == 404
    assert "PERPS_NOT_FOUND (HTTP 404)" in str(e)
    # A GET sends no body signature: no x-request-id on its error.
    with pytest.raises(perps.PerpsError) as exc:
        client.query_order(session, {"order_id": 4294967299999})
    assert exc.value.code is perps.Code.NOT_FOUND and exc.value.x_request_id is None

    # A market order (ioc) fills: trades, a position, the balance.
    market = {"symbol": "BTC-USD", "side": "buy", "order_type": "market", "qty": Decimal("0.01"), "time_in_force": "ioc", "reduce_only": False}
    client.new_order(session, market)
    trades = rows(client.query_trades(session, {"symbol": "BTC-USD", "side": "buy"}))
    assert trades and trades[0]["symbol"] == "BTC-USD" and Decimal(str(trades[0]["qty"])) > 0
    assert rows(client.query_trades(session))
    positions = rows(client.query_positions(session, {"symbol": "BTC-USD"}))
    assert any(p["symbol"] == "BTC-USD" and Decimal(str(p["qty"])) > 0 for p in positions), positions
    assert rows(client.query_positions(session))
    balance = json.loads(client.query_balance(session))
    assert "equity" in balance and Decimal(str(balance["balance"])) > 0

    # Batch cancel, by order id and by cl_ord_id.
    a = json.loads(client.new_order(session, limit_buy(bid)))
    b_cl = f"py-batch-{time.time_ns() % 10**9}"
    client.new_order(session, limit_buy(bid, cl_ord_id=b_cl))
    a_id = json.loads(client.query_order(session, {"cl_ord_id": a["cl_ord_id"]}))["id"]
    answer = json.loads(client.cancel_orders(session, {"order_id_list": [a_id], "cl_ord_id_list": (b_cl,)}))
    assert answer == [] or answer["code"] == 0, answer
    for c in (a["cl_ord_id"], b_cl):
        assert json.loads(client.query_order(session, {"cl_ord_id": c}))["status"] == "canceled"
    # The dict was written once, as the venue received it (a tuple is a JSON array).
    assert sandbox.requests("cancel_orders")[-1]["body"] == json.dumps(
        {"order_id_list": [a_id], "cl_ord_id_list": [b_cl]}, separators=(",", ":")
    )


def test_decimals_and_floats_in_dicts(signed_in):
    sandbox, client, session = signed_in
    # Decimal: a plain decimal string, whatever its exponent, never a JSON number.
    order = limit_buy("6.5E+4", qty="1E-2")
    body = perps.order_serialize(order)
    assert '"qty":"0.01"' in body and '"price":"65000"' in body, body
    assert json.loads(perps.order_serialize({**order, "qty": Decimal("0.000010")}))["qty"] == "0.000010"
    before = len(sandbox.requests())
    refusals = [
        # float in endpoint parameters: refused here, naming its place.
        (lambda: client.cancel_order(session, {"order_id": 12.0}), perps.Code.INVALID_ARGUMENT, "params.order_id is a float"),
        (lambda: client.cancel_orders(session, {"order_id_list": [1, 2.0]}), perps.Code.INVALID_ARGUMENT, "params.order_id_list[1]"),
        (lambda: client.query_depth_book(None, {"symbol": "BTC-USD", "limit": float("inf")}), perps.Code.INVALID_ARGUMENT, "params.limit"),
        # a Decimal id is a string, which the library refuses for an int64 id.
        (lambda: client.cancel_order(session, {"order_id": Decimal("12")}), perps.Code.INVALID_ARGUMENT, "order_id"),
        # float in an order: the library refuses the JSON number, naming the field.
        (lambda: client.new_order(session, {**order, "price": 65000.5}), perps.Code.INVALID_ORDER, "price"),
        (lambda: perps.order_serialize({**order, "qty": 0.1}), perps.Code.INVALID_ORDER, "qty"),
        (lambda: client.new_order(session, {**order, "qty": Decimal("NaN")}), perps.Code.INVALID_ARGUMENT, "order.qty is NaN"),
    ]
    for call, code, needle in refusals:
        with pytest.raises(perps.PerpsError) as exc:
            call()
        assert exc.value.code is code and needle in exc.value.message, exc.value
    assert len(sandbox.requests()) == before


def test_params_refused_before_sending(signed_in):
    sandbox, client, session = signed_in
    before = len(sandbox.requests())
    cases = [
        (lambda: client.cancel_order(session, {"order_id": "12"}), "order_id"),
        (lambda: client.cancel_orders(session, {"order_id_list": []}), "order_id_list"),
        (lambda: client.change_leverage(session, {"symbol": "BTC-USD", "leverage": "10"}), "leverage"),
        (lambda: client.change_margin_mode(session, {"symbol": "BTC-USD", "margin_mode": "CROSS"}), "margin_mode"),
        (lambda: client.query_order(session, {}), "query_order"),
        (lambda: client.query_orders(session, {"limit": 501}), "limit"),
        (lambda: client.query_open_orders(session, {"symbol": "BTC-USD", "nope": 1}), "nope"),
        (lambda: client.query_trades(session, {"start": "yesterday"}), "start"),
        (lambda: client.query_positions(session, "[]"), "params_json"),
        (lambda: client.query_balance(session, {"symbol": "BTC-USD"}), "symbol"),
        (lambda: client.query_position_config(session, None), "symbol"),
        (lambda: client.query_symbol_info(None, {"symbol": None}), "symbol"),
        (lambda: client.query_symbol_price(None, {"symbol": "BTC-USD", "x": 1}), '"x"'),
        (lambda: client.query_depth_book(None, '{"symbol":"BTC\0"}'), "params contains a NUL character"),
    ]
    for call, needle in cases:
        with pytest.raises(perps.PerpsError) as exc:
            call()
        e = exc.value
        assert e.code is perps.Code.INVALID_ARGUMENT and needle in e.message, e
        assert e.http_status == 0 and not e.may_have_reached_venue and e.x_request_id is None
        assert e.retry_after_ms == -1
    # Account endpoints need a Session (None is a TypeError, as for new_order) with a token.
    with pytest.raises(TypeError):
        client.query_balance(None)
    with perps.Session() as fresh:
        with pytest.raises(perps.PerpsError) as exc:
            client.query_open_orders(fresh)
        assert exc.value.code is perps.Code.INVALID_STATE
    assert len(sandbox.requests()) == before


def test_cancel_all(signed_in):
    sandbox, client, session = signed_in
    prefix = "py-all-%d-" % (time.time_ns() % 10**9)
    bid = far_bid(client)
    for name in ("a", "b"):
        client.new_order(session, limit_buy(bid, cl_ord_id=prefix + name))
    other = json.loads(client.new_order(session, limit_buy(bid)))["cl_ord_id"]
    # The batch is lost once (HTTP 503, nothing done): it is sent again.
    sandbox.set_faults({"per_endpoint": {"cancel_orders": {"status": 503, "times": 1}}})
    report = json.loads(client.cancel_all(session, {"cl_ord_id_prefix": prefix, "confirm_ms": 10000}))
    assert report["complete"] is True and report["cancel_requests"] == 2, report
    assert report["failed_cancel_requests"] == 1, report
    assert sorted(o["cl_ord_id"] for o in report["orders"]) == [prefix + "a", prefix + "b"], report
    assert all(o["status"] == "canceled" and o["confirmed"] for o in report["orders"]), report
    for name in ("a", "b"):
        assert json.loads(client.query_order(session, {"cl_ord_id": prefix + name}))["status"] == "canceled"
    assert json.loads(client.query_order(session, {"cl_ord_id": other}))["status"] == "open"
    client.cancel_order(session, {"cl_ord_id": other})
    with pytest.raises(perps.PerpsError) as exc:
        client.cancel_all(session, {"confirm_ms": -1})
    assert exc.value.code is perps.Code.INVALID_ARGUMENT and "confirm_ms" in str(exc.value)


def test_order_timeout_found_by_cl_ord_id(signed_in):
    sandbox, _, session = signed_in
    options = {"read_timeout_ms": 300, "total_timeout_ms": 500, "cl_ord_id_prefix": "py-"}
    with perps.Client(sandbox.base_url, sandbox.perps_url, options) as client:
        # The venue is slow for the next order only: it books it after the client gave up.
        sandbox.set_faults({"per_endpoint": {"new_order": {"slow_ms": 1200, "times": 1}}})
        with pytest.raises(perps.PerpsError) as exc:
            client.new_order(session, limit_buy(far_bid(client), qty="0.02"))
        e = exc.value
        assert e.code is perps.Code.TIMEOUT and e.may_have_reached_venue
        assert e.cl_ord_id.startswith("py-") and len(e.cl_ord_id) == 29, e.cl_ord_id
        assert UUID_V4.match(e.x_request_id) and e.retry_after_ms == -1
        # Look before resending: not visible until the venue has booked it, then found.
        deadline = time.monotonic() + 10
        while True:
            try:
                found = json.loads(client.query_order(session, {"cl_ord_id": e.cl_ord_id}))
                break
            except perps.PerpsError as not_yet:
                assert not_yet.code is perps.Code.NOT_FOUND and time.monotonic() < deadline, not_yet
                time.sleep(0.1)
        assert found["status"] == "open" and Decimal(found["qty"]) == Decimal("0.02")
        (sent,) = sandbox.requests("new_order")
        assert sent["headers"]["x-request-id"] == e.x_request_id


def test_rate_limited_refuse(signed_in):
    sandbox, _, session = signed_in
    # The host's per-IP limit (48 in any 1.1 s) is shared by every client of the process and
    # counts the earlier tests' requests: let them leave its window, so that what refuses
    # below is the account's bucket.
    time.sleep(1.15)
    with perps.Client(sandbox.base_url, sandbox.perps_url, {"rate_limit": "refuse"}) as client:
        sent = 0
        with pytest.raises(perps.PerpsError) as exc:
            for _ in range(400):  # a burst of 18, then one each 45 ms
                client.query_balance(session)
                sent += 1
        e = exc.value
        assert e.code is perps.Code.RATE_LIMITED and e.code == 14
        assert sent >= 15 and 0 < e.retry_after_ms <= 1000, (sent, e.retry_after_ms)
        assert e.http_status == 0 and e.x_request_id is None and not e.may_have_reached_venue
    assert len(sandbox.requests("query_balance")) == sent


def test_error_fields_default():
    e = perps.PerpsError(perps.Code.HTTP_STATUS, "m", 429, "{}", True, "cl-1", "0f8fad5b-d9cb-469f-a165-70867728950e", 2000)
    assert (e.cl_ord_id, e.x_request_id, e.retry_after_ms) == ("cl-1", "0f8fad5b-d9cb-469f-a165-70867728950e", 2000)
    plain = perps.PerpsError(perps.Code.INVALID_ARGUMENT, "m")
    assert plain.cl_ord_id is None and plain.x_request_id is None and plain.retry_after_ms == -1
