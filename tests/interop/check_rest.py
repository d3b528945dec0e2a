"""REST checks: every endpoint the library exposes, with the answer forms venue-api.md lists
(§1.3-§1.7, §3.1, §6). Run all: python check_rest.py ; one: python check_rest.py NAME"""
import json
import sys

from common import client, session, error_of, describe, perps, registry, run_checks
from venue import Venue, ok, ORDER, TRADE, page

ORDER_IN = {"symbol": "BTC-USD", "side": "buy", "order_type": "limit", "qty": "0.001",
            "price": "65000", "time_in_force": "alo", "reduce_only": False}
CHECKS, check = registry()


def answer(path, status, body, headers=None):
    """A venue whose `path` answers (status, body)."""
    v = Venue()
    v.rest[path] = lambda r: ok(body, status, headers)
    return v


def call(v, fn_name, params, public=False):
    with client(v) as c:
        s = None if public else session()
        fn = getattr(c, fn_name)
        return error_of(fn, s, params) if params is not None else error_of(fn, s)


def expect_ok(v, fn_name, params, public=False, want=None):
    e, res = call(v, fn_name, params, public)
    if e is not None:
        return False, describe(e)
    if want is not None and not want(res):
        return False, f"answer not as expected: {res[:300]}"
    return True, (res or "")[:160]


def expect_code(v, fn_name, params, code, public=False, reached=None):
    e, res = call(v, fn_name, params, public)
    if e is None:
        return False, f"succeeded: {res[:200]}"
    good = e.code == code and (reached is None or e.may_have_reached_venue == reached)
    return good, describe(e)


# ---- cancels (§1.3, §6.1) -----------------------------------------------------------------
@check("cancel_orders_bare_array")  # [DOC-J] `[]`
def _():
    return expect_ok(answer("/api/cancel_orders", 200, []), "cancel_orders", {"order_id_list": [11545819148]})


@check("cancel_orders_code_envelope")  # [DOC-A]
def _():
    return expect_ok(answer("/api/cancel_orders", 200, {"code": 0, "message": "success", "request_id": "r1"}),
                     "cancel_orders", {"cl_ord_id_list": ["a", "b"]})


@check("cancel_order_success")  # §1.3 {code,message,request_id}
def _():
    return expect_ok(answer("/api/cancel_order", 200, {"code": 0, "message": "success", "request_id": "r"}),
                     "cancel_order", {"order_id": 11949281438})


@check("cancel_order_404_not_found")  # §1.3 [LP][WJ] HTTP 404 "order not found" = done
def _():
    return expect_code(answer("/api/cancel_order", 404, {"code": 404, "message": "order not found"}),
                       "cancel_order", {"cl_ord_id": "gone"}, perps.Code.NOT_FOUND)


@check("cancel_order_404_plain_text")  # §3.1 error bodies sometimes plain text
def _():
    return expect_code(answer("/api/cancel_order", 404, "order not found", {"Content-Type": "text/plain"}),
                       "cancel_order", {"cl_ord_id": "gone"}, perps.Code.NOT_FOUND)


@check("cancel_orders_with_session_id_header")  # §2.4 [WD] adds x-session-id to cancel_orders
def _():
    v = Venue()
    with client(v) as c:
        s = session()
        s.set_session_id("sess-1")
        c.cancel_orders(s, {"order_id_list": [1]})
    h = v.requests("/api/cancel_orders")[0].headers
    return h.get("x-session-id") == "sess-1", f"x-session-id={h.get('x-session-id')}"


# ---- new_order synchronous rejections (§1.3, §6.18, §3.1) ---------------------------------
@check("new_order_alo_rejected_sync_200_code400")
def _():
    v = answer("/api/new_order", 200, {"code": 400, "message": "alo order rejected", "request_id": "r"})
    with client(v) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    good = e is not None and e.code == perps.Code.API_ERROR and not e.may_have_reached_venue
    return good, describe(e)


@check("new_order_http400_tick")  # §3.1 "not follow price tick"
def _():
    v = answer("/api/new_order", 400, {"code": 400, "message": "price not follow price tick"})
    with client(v) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    good = e is not None and e.code == perps.Code.HTTP_STATUS and e.http_status == 400 and "tick" in e.message
    return good, describe(e)


@check("new_order_403_signature_expired_hint")  # §3.3
def _():
    v = answer("/api/new_order", 403, {"code": 403, "message": "signature has expired"})
    with client(v) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    good = e is not None and e.http_status == 403 and "sync_time" in e.message
    return good, describe(e)


@check("new_order_429_retry_after")  # §3.2 (no Retry-After documented, [KU] reads one)
def _():
    v = answer("/api/new_order", 429, {"code": 429, "message": "too many requests"}, {"Retry-After": "2"})
    with client(v) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    good = e is not None and e.http_status == 429 and e.retry_after_ms == 2000 and not e.may_have_reached_venue
    return good, describe(e)


@check("new_order_429_no_retry_after")
def _():
    v = answer("/api/new_order", 429, "rate limited", {"Content-Type": "text/plain"})
    with client(v) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    good = e is not None and e.http_status == 429 and not e.may_have_reached_venue
    return good, describe(e)


@check("new_order_502_reached")  # §3.1 [WJ] 502 during turbulence
def _():
    v = answer("/api/new_order", 502, "<html>bad gateway</html>", {"Content-Type": "text/html"})
    with client(v) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    good = e is not None and e.http_status == 502 and e.may_have_reached_venue and len(v.requests("/api/new_order")) == 1
    return good, describe(e) + f" sends={len(v.requests('/api/new_order'))}"


@check("new_order_401_hint")  # §3.4 expiry shows as 401
def _():
    v = answer("/api/new_order", 401, {"code": 401, "message": "token expired"})
    with client(v) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    good = e is not None and e.http_status == 401 and "sign" in e.message.lower()
    return good, describe(e)


@check("new_order_code_string_zero")  # §6 code as string
def _():
    v = answer("/api/new_order", 200, {"code": "0", "message": "success", "request_id": "r"})
    with client(v) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    return e is None, describe(e) if e else r[:120]


# ---- queries (§1.4) -----------------------------------------------------------------------
@check("query_order_full_row")
def _():
    return expect_ok(Venue(), "query_order", {"order_id": 11545819148},
                     want=lambda r: json.loads(r)["id"] == 11545819148)


@check("query_order_no_margin_fields")  # §1.4 avail_locked/margin may be absent
def _():
    row = {k: v for k, v in ORDER.items() if k not in ("margin", "avail_locked")}
    return expect_ok(answer("/api/query_order", 200, row), "query_order", {"cl_ord_id": "c1"})


@check("query_order_404_not_visible_yet")  # §1.4 [LP]
def _():
    return expect_code(answer("/api/query_order", 404, {"code": 404, "message": "order not found"}),
                       "query_order", {"cl_ord_id": "new"}, perps.Code.NOT_FOUND)


@check("query_order_big_id_int64")  # §1.1 ids > 2^32 (and near 2^63)
def _():
    row = dict(ORDER, id=9223372036854775806)
    v = answer("/api/query_order", 200, row)
    e, r = call(v, "query_order", {"order_id": 9223372036854775806})
    q = v.requests("/api/query_order")
    return (e is None and q and q[0].query.get("order_id") == "9223372036854775806"
            and "9223372036854775806" in r), describe(e) if e else f"sent {q[0].query}"


for _status in ["open", "new", "canceled", "cancelled", "filled", "rejected", "untriggered",
                "partially_filled", "expired"]:  # §1.6, §6.5
    def _mk(st):
        def f():
            v = Venue()
            e, r = call(v, "query_orders", {"symbol": "BTC-USD", "status": st})
            sent = v.requests("/api/query_orders")
            wire = "canceled" if st == "cancelled" else st  # the reference's spelling, which the venue filters on
            return e is None and sent and sent[0].query.get("status") == wire, describe(e) if e else f"sent {sent[0].query}"
        return f
    CHECKS[f"query_orders_status_{_status}"] = _mk(_status)


@check("query_orders_envelope")  # §1.4 {page_size,result,total}
def _():
    return expect_ok(Venue(), "query_orders", {"symbol": "BTC-USD", "limit": 500, "last_id": 5})


@check("query_orders_envelope_with_code_message")  # §6.9 [WJ]
def _():
    body = dict(page([ORDER]), code=0, message="success")
    return expect_ok(answer("/api/query_orders", 200, body), "query_orders", {"symbol": "BTC-USD"})


@check("query_orders_bare_array")  # §7.7 bare-array vs envelope
def _():
    return expect_ok(answer("/api/query_orders", 200, [ORDER]), "query_orders", {"symbol": "BTC-USD"})


@check("query_orders_iso_start_end")  # §1.4 ISO-8601 strings
def _():
    v = Venue()
    e, r = call(v, "query_orders", {"start": "2026-01-02T03:04:05.250+08:00", "end": "2026-01-03"})
    q = v.requests("/api/query_orders")
    return e is None, describe(e) if e else f"sent {q[0].query}"


@check("query_open_orders_envelope")
def _():
    return expect_ok(Venue(), "query_open_orders", {"symbol": "BTC-USD", "limit": 1200})


@check("query_open_orders_with_code_message")
def _():
    return expect_ok(answer("/api/query_open_orders", 200, dict(page([ORDER]), code=0, message="success")),
                     "query_open_orders", {"symbol": "BTC-USD"})


@check("query_open_orders_empty_result_null")  # an empty page written with result null
def _():
    return expect_ok(answer("/api/query_open_orders", 200, {"page_size": 0, "result": None, "total": 0}),
                     "query_open_orders", {})


@check("query_trades_envelope")
def _():
    return expect_ok(Venue(), "query_trades", {"symbol": "BTC-USD", "side": "sell", "last_id": 9000, "limit": 500})


@check("query_trades_bare_array")
def _():
    return expect_ok(answer("/api/query_trades", 200, [TRADE]), "query_trades", {"symbol": "BTC-USD"})


@check("query_positions_signed_qty_extra_field")  # §1.4 signed qty, required_margin
def _():
    return expect_ok(Venue(), "query_positions", {"symbol": "BTC-USD"},
                     want=lambda r: json.loads(r)[0]["qty"] == "-0.002")


@check("query_positions_empty")
def _():
    return expect_ok(answer("/api/query_positions", 200, []), "query_positions", None)


@check("query_balance_unified_plus_pnl_24h")
def _():
    return expect_ok(Venue(), "query_balance", None)


@check("query_balance_negative_available")  # §1.4 cross_available may be negative
def _():
    from venue import BALANCE
    return expect_ok(answer("/api/query_balance", 200, dict(BALANCE, cross_available="-12.5")), "query_balance", None)


@check("query_position_config")
def _():
    return expect_ok(Venue(), "query_position_config", {"symbol": "BTC-USD"})


@check("query_funding_history_bare_array_via_request")  # §1.4 [DOC-A]+[WJ]: also through perps_request
def _():
    v = Venue()
    with client(v) as c:
        e, r = error_of(c.request, session(), "GET", "/api/query_funding_history?symbol=BTC-USD&limit=10")
    return e is None and json.loads(r)[0]["txn_type"] == "funding_fee", describe(e) if e else r[:160]


@check("query_funding_history_both_forms")  # §1.4 bare array live [WJ]; §1.7 envelope of the other lists
def _():
    out, good = [], True
    for form in ("bare", "envelope"):
        v = Venue()
        rows = json.loads(v.rest["/api/query_funding_history"](None)[1])
        if form == "envelope":
            v.rest["/api/query_funding_history"] = lambda r, rows=rows: ok(page(rows))
        params = {"symbol": "BTC-USD", "last_id": 9007199254740993, "limit": 50,
                  "start": "2026-11-01T00:00:00Z", "end": "2026-11-02T00:00:00Z"}
        e, res = call(v, "query_funding_history", params)
        q = v.requests("/api/query_funding_history")
        sent = q[0].query if q else {}
        body = json.loads(res) if e is None else None
        got = body if form == "bare" else (body or {}).get("result")
        this = (e is None and got == rows and len(q) == 1 and sent.get("last_id") == "9007199254740993"
                and sent.get("limit") == "50" and sent.get("symbol") == "BTC-USD" and "start" in sent
                and q[0].headers.get("authorization", "").startswith("Bearer "))
        good &= this
        out.append(f"{form}: " + (describe(e) if e else f"query={sent}"))
    return good, " | ".join(out)


# ---- public (§1.5) ------------------------------------------------------------------------
@check("symbol_info_without_symbol")  # §6.8 called without symbol live
def _():
    v = Venue()
    e, r = call(v, "query_symbol_info", None, public=True)
    q = v.requests("/api/query_symbol_info")
    return e is None and "symbol" not in q[0].query, describe(e) if e else f"query={q[0].query}"


@check("symbol_info_status_trading_extra")  # §6.8 status:"trading" vs enabled
def _():
    from venue import SYMBOL_INFO
    row = dict(SYMBOL_INFO, status="trading")
    row.pop("enabled")
    return expect_ok(answer("/api/query_symbol_info", 200, [row]), "query_symbol_info", {"symbol": "BTC-USD"}, public=True)


@check("symbol_price_nulls")  # §1.5 last/mid/spread may be null
def _():
    return expect_ok(Venue(), "query_symbol_price", {"symbol": "BTC-USD"}, public=True)


@check("depth_book_unsorted_sorted")  # §1.5 level order not guaranteed
def _():
    def want(r):
        b = json.loads(r)
        return ([x[0] for x in b["bids"]] == ["65000", "64999.75", "64990"]
                and [x[0] for x in b["asks"]] == ["65001.5", "65002", "65010"])
    return expect_ok(Venue(), "query_depth_book", {"symbol": "BTC-USD"}, public=True, want=want)


@check("depth_book_numbers_not_strings")  # §1.1 "a few fields come back as numbers"; WJ decodes string-or-number
def _():
    body = {"asks": [[65002, 1], [65001.5, 2]], "bids": [[64990, 1], [65000, 3]], "symbol": "BTC-USD"}
    return expect_ok(answer("/api/query_depth_book", 200, body), "query_depth_book", {"symbol": "BTC-USD"}, public=True,
                     want=lambda r: json.loads(r)["bids"][0][0] == 65000)


@check("depth_book_empty_side_null")
def _():
    body = {"asks": None, "bids": [["1", "1"]], "symbol": "BTC-USD"}
    return expect_ok(answer("/api/query_depth_book", 200, body), "query_depth_book", {"symbol": "BTC-USD"}, public=True)


@check("depth_book_extra_fields")  # [DJ] reads sequence/time/last_price inside data
def _():
    from venue import BOOK
    body = dict(BOOK, sequence=5, time="2026-01-13T10:00:00Z", last_price="65000")
    return expect_ok(answer("/api/query_depth_book", 200, body), "query_depth_book", {"symbol": "BTC-USD", "limit": 20}, public=True,
                     want=lambda r: json.loads(r).get("sequence") == 5)


# ---- server time (§1.5 kline/time, §3.3) --------------------------------------------------
@check("kline_time_bare_int_seconds")
def _():
    v = Venue()
    with client(v) as c:
        e, r = error_of(c.sync_time)
    return e is None and abs(r) < 2000, describe(e) if e else f"offset_ms={r}"


@check("kline_time_milliseconds")  # geo systemTime is ms (§1.5); a venue answering ms
def _():
    import time as t
    v = answer("/api/kline/time", 200, str(int(t.time() * 1000)))
    with client(v) as c:
        e, r = error_of(c.sync_time)
    # Either read correctly (offset ~0) or refused clearly: a huge offset is the failure.
    return (e is not None) or abs(r) < 2000, describe(e) if e else f"offset_ms={r}"


@check("perps_request_array_and_text_answers")  # §1.5 arrays (recent trades, funding rates), §1.5 health "OK"
def _():
    v = Venue()
    v.rest["/api/query_recent_trades"] = lambda r: ok([{"is_buyer_taker": True, "price": "1", "qty": "1", "quote_qty": "1", "symbol": "BTC-USD", "time": "2026-01-13T10:00:00Z"}])
    v.rest["/api/query_funding_rates"] = lambda r: ok([])
    v.rest["/api/kline/history"] = lambda r: ok({"s": "ok", "t": [1], "o": [1.5], "h": [2], "l": [1], "c": [1.5], "v": [10]})
    out, good = [], True
    with client(v) as c:
        s = session()
        for method, path, body in [("GET", "/api/query_recent_trades?symbol=BTC-USD", None),
                                   ("GET", "/api/query_funding_rates?symbol=BTC-USD&start_time=1&end_time=2", None),
                                   ("GET", "/api/kline/history?symbol=BTC-USD&from=1&to=2&resolution=1", None),
                                   ("GET", "/api/health", None),
                                   ("POST", "/api/cancel_orders", '{"order_id_list":[1]}')]:
            e, r = error_of(c.request, s, method, path, body)
            good &= e is None
            out.append(f"{method} {path.split('?')[0]}: " + (describe(e) if e else "ok " + r[:40]))
    return good, " | ".join(out)


if __name__ == "__main__":
    sys.exit(run_checks(CHECKS, sys.argv[1:]))
