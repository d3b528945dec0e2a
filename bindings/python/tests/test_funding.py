"""query_funding_history through the Python binding against the sandbox venue: the venue
settles funding at a rate (its admin control POST /_sandbox/funding), and the row that comes
back must carry the payment this test computes itself, exactly (Decimal) — −qty × mark ×
rate from the position the venue reported, rounded half away from zero to nine decimals —
and the balance must move by it; then paging with limit and last_id, and parameters refused
before anything is sent.
"""

import json
import urllib.request
from decimal import ROUND_HALF_UP, Decimal

import pytest

import perps
from test_flow import WALLET_KEY, sandbox  # noqa: F401  (sandbox: the fixture)


def settle(sandbox, body):  # noqa: F811
    req = urllib.request.Request(
        sandbox.admin_url + "/funding",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        assert resp.status == 200
        return json.load(resp)


def test_settled_funding_row_paging_and_refusals(sandbox):  # noqa: F811
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", WALLET_KEY, 3600)
        client.new_order(
            session,
            {"symbol": "BTC-USD", "side": "buy", "order_type": "market", "qty": "0.0100", "time_in_force": "ioc", "reduce_only": False},
        )
        assert json.loads(client.query_funding_history(session)) == []

        def position():
            return json.loads(client.query_positions(session, {"symbol": "BTC-USD"}))[0]

        def balance():
            return Decimal(json.loads(client.query_balance(session))["balance"])

        checked = False
        # The sandbox's marks walk every 3 s: a settlement is checked when the mark read
        # before and after it is the same, and tried again otherwise.
        for attempt in range(1, 6):
            before, balance_before = position(), balance()
            assert settle(sandbox, {"symbol": "BTC-USD", "rate": "0.0001"})["rows"] >= 1
            after, balance_after = position(), balance()
            got = json.loads(client.query_funding_history(session, {"symbol": "BTC-USD"}))
            assert isinstance(got, list) and len(got) == attempt, got
            row = got[0]  # newest first
            assert (row["txn_type"], row["asset"], row["symbol"]) == ("funding_fee", "DUSD", "BTC-USD")
            paid = Decimal(row["qty"])
            assert balance_after - balance_before == paid
            if before["mark_price"] != after["mark_price"]:
                continue
            exact = -Decimal(before["qty"]) * Decimal(before["mark_price"]) * Decimal("0.0001")
            expected = exact.quantize(Decimal("0.000000001"), rounding=ROUND_HALF_UP)
            assert paid == expected and paid < 0, (row, before)
            checked = True
            break
        assert checked, "no settlement without a walk step during it"

        # Paging: the newest row alone, then the older ones from its id.
        settle(sandbox, {"rate": "-0.0002"})
        every = json.loads(client.query_funding_history(session))
        (first,) = json.loads(client.query_funding_history(session, {"limit": 1}))
        assert first["id"] == every[0]["id"] and Decimal(first["qty"]) > 0
        rest = json.loads(client.query_funding_history(session, {"last_id": every[0]["id"]}))
        assert [r["id"] for r in rest] == [r["id"] for r in every[1:]]

        # Refused before sending.
        sent = len(sandbox.requests())
        for params, fragment in [
            ({"limit": 501}, "expected an integer from 1 to 500"),
            ({"side": "buy"}, 'unknown parameter "side"'),
            ('{"start":"2026-01-03","end":"2026-01-02"}', 'is after "end"'),
        ]:
            with pytest.raises(perps.PerpsError) as caught:
                client.query_funding_history(session, params)
            assert caught.value.code == perps.Code.INVALID_ARGUMENT and fragment in str(caught.value)
            assert not caught.value.may_have_reached_venue
        assert len(sandbox.requests()) == sent
