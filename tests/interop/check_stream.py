"""Market/account stream (ws-stream/v1) and order stream (ws-api/v1) variants from
venue-api.md §2.2-§2.3 and §6, served with aiohttp's WebSocket server.
Run: python check_stream.py [NAME...]"""
import asyncio
import json
import sys

from aiohttp import WSMsgType

from common import client, session, error_of, describe, collect, brief, perps, registry, run_checks
from venue import Venue, stream_auth_then, order_stream_default, ORDER, POSITION, TRADE

CHECKS, check = registry()
SUBS = [{"channel": "price", "symbol": "BTC-USD"}, {"channel": "depth_book", "symbol": "BTC-USD"},
        {"channel": "order"}, {"channel": "position"}, {"channel": "balance"}, {"channel": "trade"}]
PRICE = {"base": "BTC", "quote": "DUSD", "symbol": "BTC-USD", "index_price": "65000", "mark_price": "65001",
         "last_price": "65000.5", "mid_price": "65000.75", "spread": ["65000.5", "65001"],
         "time": "2026-01-13T10:00:00.123456789Z"}
BALANCE_PUSH = {"account_type": "perps", "token": "DUSD", "free": "980", "total": "1000", "locked": "6.5",
                "occupied": "13", "inbound": "0", "outbound": "0", "is_enabled": True, "kind": "user",
                "id": 5, "wallet_id": 6, "ref_id": 7, "version": 12, "last_tx": "tx",
                "last_tx_updated_at": "2026-01-13T10:00:00Z", "created_at": "2026-01-13T10:00:00Z",
                "updated_at": "2026-01-13T10:00:00Z"}
POSITION_PUSH = {k: POSITION[k] for k in ("id", "symbol", "qty", "entry_price", "entry_value", "initial_margin",
                 "leverage", "margin_mode", "margin_asset", "realized_pnl", "status", "created_at", "updated_at", "user")}


def run(pushes, subs=SUBS, auth_answer=None, secs=1.5, with_session=True, stop=None):
    v = Venue()
    v.stream = lambda ws, ven: stream_auth_then(ws, ven, pushes, auth_answer)
    with client(v) as c:
        e, st = error_of(c.open_stream, session() if with_session else None, subs)
        evs = collect(st, secs, stop) if st else []
        if st:
            st.close()
    return v, e, evs


def data_events(evs, channel=None):
    return [e for e in evs if e.get("channel") not in ("status",) and (channel is None or e.get("channel") == channel)]


# ---- auth answers (§2.2, §6.3) -------------------------------------------------------------
for _label, _ans in [
    ("auth_code_200_in_data", {"seq": 1, "channel": "auth", "data": {"code": 200, "msg": "success"}}),
    ("auth_code_0_in_data", {"seq": 1, "channel": "auth", "data": {"code": 0, "msg": "success"}}),
    ("auth_code_0_top_level", {"seq": 1, "channel": "auth", "code": 0, "msg": "success"}),
    ("auth_code_string_200", {"seq": 1, "channel": "auth", "data": {"code": "200", "msg": "success"}}),
]:
    def _mk(ans):
        def f():
            v, e, evs = run([{"seq": 2, "channel": "order", "data": ORDER}], auth_answer=ans)
            d = data_events(evs, "order")
            return e is None and len(d) == 1, f"{describe(e)} events={[brief(x) for x in evs][:3]}"
        return f
    CHECKS[_label] = _mk(_ans)


@check("auth_refused_401")
def _():
    v, e, evs = run([], auth_answer={"seq": 1, "channel": "auth", "data": {"code": 401, "msg": "invalid token"}})
    return e is not None and e.code == perps.Code.API_ERROR and "invalid token" in e.message, describe(e)


@check("auth_frame_shape")  # {"auth":{"token","streams":[{"channel":…}]}} and subscribe frames
def _():
    v, e, evs = run([])
    frames = [json.loads(x) for x in v.ws_log if x.startswith("{")]
    auth = [f for f in frames if "auth" in f]
    subs = [f["subscribe"] for f in frames if "subscribe" in f]
    good = (auth and sorted(s["channel"] for s in auth[0]["auth"].get("streams", [])) == ["balance", "order", "position", "trade"]
            and {"channel": "price", "symbol": "BTC-USD"} in subs)
    return bool(good), f"auth={auth} subscribes={subs}"


# ---- seq forms and envelopes (§2.2) --------------------------------------------------------
@check("seq_int_envelope_with_symbol")
def _():
    v, e, evs = run([{"seq": 2, "channel": "price", "symbol": "BTC-USD", "data": PRICE}])
    d = data_events(evs, "price")
    return len(d) == 1 and d[0]["symbol"] == "BTC-USD" and d[0]["seq"] == 2, str([brief(x) for x in evs])


@check("seq_string_digits")
def _():
    v, e, evs = run([{"seq": "2", "channel": "price", "symbol": "BTC-USD", "data": PRICE}])
    d = data_events(evs, "price")
    return len(d) == 1, str([brief(x) for x in evs])


@check("envelope_without_symbol_public")  # symbol only in data
def _():
    v, e, evs = run([{"seq": 2, "channel": "price", "data": PRICE}])
    d = data_events(evs, "price")
    return len(d) == 1 and d[0].get("symbol") == "BTC-USD", str([brief(x) for x in evs])


@check("envelope_without_seq")  # seq is documented as int; a push without one
def _():
    v, e, evs = run([{"channel": "price", "symbol": "BTC-USD", "data": PRICE}])
    d = data_events(evs)
    return len(d) == 1 and d[0].get("channel") == "price", str([brief(x) for x in evs])


@check("seq_above_2_53")
def _():
    big = 2 ** 53 + 1
    v, e, evs = run([{"seq": big, "channel": "price", "symbol": "BTC-USD", "data": PRICE},
                     {"seq": big + 1, "channel": "price", "symbol": "BTC-USD", "data": PRICE}])
    d = data_events(evs, "price")
    bad = [x for x in evs if x.get("state") in ("gap", "seq_regression")]
    return len(d) == 2 and d[0]["seq"] == big and not bad, str([brief(x) for x in evs][1:])


@check("seq_gap_reported")
def _():
    v, e, evs = run([{"seq": 2, "channel": "price", "symbol": "BTC-USD", "data": PRICE},
                     {"seq": 9, "channel": "price", "symbol": "BTC-USD", "data": PRICE}])
    return any(x.get("state") == "gap" for x in evs), str([brief(x) for x in evs][1:])


@check("seq_regression_reported")
def _():
    v, e, evs = run([{"seq": 5, "channel": "price", "symbol": "BTC-USD", "data": PRICE},
                     {"seq": 3, "channel": "price", "symbol": "BTC-USD", "data": PRICE}])
    return any(x.get("state") == "seq_regression" for x in evs), str([brief(x) for x in evs][1:])


@check("seq_connection_wide_no_false_gap")  # one counter over channels (examples look connection-wide)
def _():
    pushes = [{"seq": 2, "channel": "price", "symbol": "BTC-USD", "data": PRICE},
              {"seq": 3, "channel": "depth_book", "symbol": "BTC-USD", "data": {"asks": [], "bids": [], "symbol": "BTC-USD"}},
              {"seq": 4, "channel": "order", "data": ORDER},
              {"seq": 5, "channel": "price", "symbol": "BTC-USD", "data": PRICE}]
    v, e, evs = run(pushes)
    bad = [x for x in evs if x.get("state") in ("gap", "seq_regression")]
    return not bad and len(data_events(evs)) == 4, str([brief(x) for x in bad])


# ---- depth_book (§2.2) ---------------------------------------------------------------------
@check("depth_book_unsorted_sorted")
def _():
    book = {"asks": [["65002", "1"], ["65001.5", "2"], ["9.5", "1"], ["10.25", "1"]],
            "bids": [["64990", "1"], ["65000", "3"], ["10.25", "1"], ["9.5", "1"]], "symbol": "BTC-USD"}
    v, e, evs = run([{"seq": 2, "channel": "depth_book", "symbol": "BTC-USD", "data": book}])
    d = data_events(evs, "depth_book")
    if not d:
        return False, str([brief(x) for x in evs])
    b = d[0]["data"]
    good = ([x[0] for x in b["bids"]] == ["65000", "64990", "10.25", "9.5"]
            and [x[0] for x in b["asks"]] == ["9.5", "10.25", "65001.5", "65002"])
    return good, f"bids={b['bids']} asks={b['asks']}"


@check("depth_book_null_side")
def _():
    v, e, evs = run([{"seq": 2, "channel": "depth_book", "symbol": "BTC-USD", "data": {"asks": None, "bids": [["1", "2"]], "symbol": "BTC-USD"}}])
    d = data_events(evs, "depth_book")
    return len(d) == 1 and d[0]["data"]["asks"] == [], str([brief(x) for x in evs])


@check("depth_book_numeric_levels")  # §1.1 [WJ] decodes every numeric field string-or-number
def _():
    v, e, evs = run([{"seq": 2, "channel": "depth_book", "symbol": "BTC-USD",
                      "data": {"asks": [[65002, 1], [65001.5, 2]], "bids": [[64990, 1], [65000, 3]], "symbol": "BTC-USD"}}])
    d = data_events(evs, "depth_book")
    return len(d) == 1 and d[0].get("channel") == "depth_book", str([brief(x) for x in evs])


@check("depth_book_extra_fields_kept")  # [DJ] sequence/time/last_price/mark_price in data
def _():
    data = {"asks": [["2", "1"]], "bids": [["1", "1"]], "symbol": "BTC-USD", "sequence": 77,
            "time": "2026-01-13T10:00:00Z", "last_price": "1.5", "mark_price": "1.5"}
    v, e, evs = run([{"seq": 2, "channel": "depth_book", "symbol": "BTC-USD", "data": data}])
    d = data_events(evs, "depth_book")
    return len(d) == 1 and d[0]["data"].get("sequence") == 77, str([brief(x) for x in evs])


# ---- account pushes (§2.2) -----------------------------------------------------------------
@check("account_pushes_documented_shapes")
def _():
    pushes = [{"seq": 2, "channel": "order", "data": ORDER},
              {"seq": 3, "channel": "position", "data": POSITION_PUSH},
              {"seq": 4, "channel": "balance", "data": BALANCE_PUSH},
              {"seq": 5, "channel": "trade", "data": TRADE}]
    v, e, evs = run(pushes)
    chans = [x["channel"] for x in data_events(evs)]
    return chans == ["order", "position", "balance", "trade"], str([brief(x) for x in evs][1:])


@check("order_push_int64_id_exact")  # §1.1 ids int64; an id above 2^53 must not be rounded
def _():
    big = 9007199254740993
    v, e, evs = run([{"seq": 2, "channel": "order", "data": dict(ORDER, id=big, position_id=big)}])
    d = data_events(evs, "order")
    got = d[0]["data"]["id"] if d else None
    return got == big, f"id sent {big} got {got}"


@check("push_number_precision_kept")  # §1.1 some fields as numbers (volume_24h…)
def _():
    v = Venue()
    raw = '{"seq":2,"channel":"price","symbol":"BTC-USD","data":{"symbol":"BTC-USD","mark_price":"1","volume_24h":12345678.123456789012345,"price_change_pct":-0.0000000001}}'
    v.stream = lambda ws, ven: stream_auth_then(ws, ven, [raw])
    with client(v) as c:
        st = c.open_stream(None, [{"channel": "price", "symbol": "BTC-USD"}])
        text = None
        for _ in range(20):
            t = st.next_text(0.2)
            if t and '"price"' in t and "volume_24h" in t:
                text = t
                break
        st.close()
    good = text is not None and "12345678.123456789012345" in text and ("-0.0000000001" in text or "-1e-10" in text.lower())
    return good, (text or "no event")[:260]


@check("public_trade_push")
def _():
    v, e, evs = run([{"seq": 2, "channel": "public_trade", "symbol": "BTC-USD",
                      "data": {"symbol": "BTC-USD", "price": "65000", "qty": "0.1", "is_buyer_taker": True, "time": "2026-01-13T10:00:00Z"}}],
                    subs=[{"channel": "public_trade", "symbol": "BTC-USD"}], with_session=False)
    return len(data_events(evs, "public_trade")) == 1, str([brief(x) for x in evs][1:])


@check("kline_subscription")  # §2.2: [WJ] subscribes kline with an extra interval (undocumented)
def _():
    v = Venue()
    with client(v) as c:
        e, st = error_of(c.open_stream, None, [{"channel": "kline", "symbol": "BTC-USD", "interval": "1"}])
        if st:
            st.close()
    return True, "informational: " + describe(e)


@check("json_ping_answered")  # §2.5 [KU][NB] JSON {"ping":…}
def _():
    v, e, evs = run(['{"ping":1700000000}'], secs=1.0)
    pongs = [x for x in v.ws_log if '"pong"' in x]
    return bool(pongs), f"pongs={pongs}"


# ---- order stream (§2.3, §6.2) ------------------------------------------------------------
ORDER_IN = {"symbol": "BTC-USD", "side": "buy", "order_type": "limit", "qty": "0.001", "price": "65000",
            "time_in_force": "alo", "reduce_only": False}


def order_run(ack_style="status", login_code=0, behaviour=None):
    v = Venue()
    v.order_stream = behaviour or (lambda ws, ven: order_stream_default(ws, ven, ack_style, login_code))
    with client(v) as c:
        e, st = error_of(c.open_order_stream, session())
        if e:
            return v, e, [], None
        sent = st.new_order(ORDER_IN)
        evs = collect(st, 2.0, lambda x: x.get("final"))
        st.close()
    return v, e, evs, sent


for _style in ("status", "message", "code202"):
    def _mk(style):
        def f():
            v, e, evs, sent = order_run(style)
            rs = [x for x in evs if x.get("channel") == "order_response"]
            good = [(x["final"], x["matched"]) for x in rs] == [(False, True), (True, True)]
            return good, f"{describe(e)} {[brief(x) for x in rs]}"
        return f
    CHECKS[f"ws_api_ack_{_style}"] = _mk(_style)


@check("ws_api_login_code_200")
def _():
    v, e, evs, sent = order_run(login_code=200)
    return e is None and any(x.get("final") for x in evs), describe(e)


@check("ws_api_params_is_string_and_headers")  # §2.3 params a JSON string; header fields
def _():
    v, e, evs, sent = order_run()
    frames = [json.loads(x) for x in v.ws_log if '"order:new"' in x]
    f = frames[0] if frames else {}
    from venue import verify_signature
    hdr = f.get("header", {})
    sig_ok = verify_signature(dict(hdr, **{"x-request-sign-version": hdr.get("x-request-sign-version", "v1")}), f.get("params", ""))
    good = isinstance(f.get("params"), str) and sig_ok and f.get("request_id") != hdr.get("x-request-id")
    return good, f"params is str={isinstance(f.get('params'), str)} sig_ok={sig_ok} header keys={sorted(hdr)}"


@check("ws_api_rejection_after_ack")  # §2.3 accepted then "alo order rejected"
def _():
    async def beh(ws, ven):
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            f = json.loads(msg.data)
            rid = f.get("request_id")
            if f.get("method") == "auth:login":
                await ws.send_str(json.dumps({"code": 0, "message": "success", "request_id": rid}))
            elif f.get("method") == "order:new":
                await ws.send_str(json.dumps({"code": 0, "status": "accepted", "request_id": rid}))
                await ws.send_str(json.dumps({"code": 400, "message": "alo order rejected", "request_id": rid}))
    v, e, evs, sent = order_run(behaviour=beh)
    rs = [x for x in evs if x.get("channel") == "order_response"]
    good = len(rs) == 2 and rs[1]["final"] and rs[1]["code"] == 400
    return good, str([brief(x) for x in rs])


@check("ws_api_account_event_before_ack")  # §2.3: account stream event may come first — on ws-api, an order push?
def _():
    async def beh(ws, ven):
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            f = json.loads(msg.data)
            rid = f.get("request_id")
            if f.get("method") == "auth:login":
                await ws.send_str(json.dumps({"code": 0, "message": "success", "request_id": rid}))
            elif f.get("method") == "order:new":
                await asyncio.sleep(0.2)
                await ws.send_str(json.dumps({"code": 0, "message": "success", "request_id": rid}))
    v, e, evs, sent = order_run(behaviour=beh)
    rs = [x for x in evs if x.get("channel") == "order_response"]
    return len(rs) == 1 and rs[0]["final"], "one-frame answer (no ack): " + str([brief(x) for x in rs])


# ---- reconnect after the documented 408 Close: auth and subscriptions sent again ----------
CLOSE_408 = '{"code":408,"message":"disconnecting due to not receive Pong within 5 minute period"}'


@check("reconnect_after_408_reauths_and_resubscribes")
def _():
    async def beh(ws, ven):
        n = ven.ws_connects["stream"]
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            ven.ws_log.append(f"conn{n}:{msg.data}")
            f = json.loads(msg.data)
            if "auth" in f:
                await ws.send_str(json.dumps({"seq": 1, "channel": "auth", "data": {"code": 0, "msg": "success"}}))
            if "subscribe" in f:
                if n == 1:
                    await ws.close(code=1000, message=CLOSE_408.encode())
                    return
                await ws.send_str(json.dumps({"seq": 2, "channel": "order", "data": ORDER}))
    v = Venue()
    v.stream = beh
    with client(v) as c:
        st = c.open_stream(session(), [{"channel": "price", "symbol": "BTC-USD"}, {"channel": "order"}])
        evs = collect(st, 3.0, lambda x: x.get("channel") == "order")
        st.close()
    second = [x for x in v.ws_log if x.startswith("conn2:")]
    got_order = any(x.get("channel") == "order" for x in evs)
    disc = [x for x in evs if x.get("state") == "disconnected"]
    good = got_order and any('"auth"' in x for x in second) and any('"subscribe"' in x for x in second)
    return good, f"second connection sent={second} disconnected={disc[0].get('close_reason') if disc else None}"


@check("kline_channel_without_interval")
def _():
    v = Venue()
    with client(v) as c:
        e, st = error_of(c.open_stream, None, [{"channel": "kline", "symbol": "BTC-USD"}])
        if st:
            st.close()
    return True, "informational: " + describe(e)


@check("no_fd_or_thread_leak_on_refused_upgrades")
def _():
    import os, threading
    from venue import RawWsServer
    from check_ws_handshake import refusal
    async def h(reader, writer, req, srv):
        writer.write(refusal(503, "Service Unavailable", "1"))
        await writer.drain()
    raw = RawWsServer(h)
    v = Venue()
    def fds():
        return len(os.listdir("/proc/self/fd"))
    with client(v, stream_url=raw.url + "/ws-stream/v1") as c:
        for _ in range(3):
            error_of(c.open_stream, None, [{"channel": "price", "symbol": "BTC-USD"}])
        f0, t0 = fds(), threading.active_count()
        for _ in range(40):
            error_of(c.open_stream, None, [{"channel": "price", "symbol": "BTC-USD"}])
    import time as _t
    _t.sleep(0.5)
    f1, t1 = fds(), threading.active_count()
    return f1 <= f0 + 2, f"fds {f0} -> {f1}, python threads {t0} -> {t1}, attempts={raw.connects}"


if __name__ == "__main__":
    sys.exit(run_checks(CHECKS, sys.argv[1:]))
