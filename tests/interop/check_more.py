"""Other things a trading user relies on (venue-api.md §1.1, §1.5, §2.2, §3, §6.8, §6.19):
symbol rules on the documented symbol_info variants, vault impersonation, server time forms,
handshake details, TLS chain/version variants. Run: python check_more.py [NAME...]"""
import asyncio
import datetime
import json
import os
import ssl
import sys
import tempfile
import time

import trustme
from aiohttp import WSMsgType

from common import client, session, error_of, describe, collect, brief, perps, registry, run_checks
from venue import Venue, RawWsServer, ok, accept_for, frame, read_frame, stream_auth_then, SYMBOL_INFO, ORDER, page
from check_ws_handshake import ok_101, serve_session, raw_client, open_public, PUBLIC

CHECKS, check = registry()
ORDER_IN = {"symbol": "BTC-USD", "side": "buy", "order_type": "limit", "qty": "0.0001",
            "price": "65000.01", "time_in_force": "gtc", "reduce_only": False}


# ---- symbol rules on the documented symbol_info forms (§1.5, §6.8, §6.19) ------------------
def rules_order(rows, order=ORDER_IN, status=200):
    v = Venue()
    v.rest["/api/query_symbol_info"] = lambda r: ok(rows, status)
    with client(v, symbol_rules=True) as c:
        e, r = error_of(c.new_order, session(), order)
    return v, e, r


@check("rules_doc_row_enabled_true")
def _():
    v, e, r = rules_order([SYMBOL_INFO])
    return e is None and len(v.requests("/api/new_order")) == 1, describe(e)


@check("rules_row_status_trading_no_enabled")  # [WJ] live: status:"trading", docs: enabled
def _():
    row = dict(SYMBOL_INFO, status="trading")
    row.pop("enabled")
    v, e, r = rules_order([row])
    return e is None and len(v.requests("/api/new_order")) == 1, describe(e)


@check("rules_row_status_trading_and_enabled")
def _():
    v, e, r = rules_order([dict(SYMBOL_INFO, status="trading")])
    return e is None and len(v.requests("/api/new_order")) == 1, describe(e)


@check("rules_doc_j_btc_lot_0_001")  # [DOC-J] BTC-USD qty 3 dp, min 0.001: 0.0001 refused locally
def _():
    row = dict(SYMBOL_INFO, qty_tick_decimals=3, min_order_qty="0.001")
    v, e, r = rules_order([row])
    return e is not None and e.code == perps.Code.INVALID_ORDER and not v.requests("/api/new_order"), describe(e)


@check("rules_numbers_as_numbers")  # §1.1: [WJ] decodes every numeric field string-or-number
def _():
    row = dict(SYMBOL_INFO, min_order_qty=0.0001, max_order_qty=100, price_tick_decimals=2, qty_tick_decimals=4)
    v, e, r = rules_order([row])
    return e is None and len(v.requests("/api/new_order")) == 1, describe(e)


@check("rules_decimals_as_strings")  # decimals "as strings, including max_open_orders"
def _():
    row = dict(SYMBOL_INFO, price_tick_decimals="2", qty_tick_decimals="4")
    v, e, r = rules_order([row])
    return e is None and len(v.requests("/api/new_order")) == 1, describe(e)


@check("rules_list_requires_symbol_fallback")  # §6.8 symbol required (docs) vs not (WJ)
def _():
    v = Venue()
    def info(r):
        if "symbol" not in r.query:
            return ok({"code": 400, "message": "symbol is required"}, 400)
        return ok([SYMBOL_INFO])
    v.rest["/api/query_symbol_info"] = info
    with client(v, symbol_rules=True) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    return e is None, describe(e) + f" info queries={[q.query for q in v.requests('/api/query_symbol_info')]}"


@check("rules_list_envelope")  # symbol_info answered inside the list envelope
def _():
    v, e, r = rules_order(page([SYMBOL_INFO]))
    return e is None and len(v.requests("/api/new_order")) == 1, describe(e)


# ---- vault impersonation (§1.1, §2.2 [DOC-A] Aug 2026) ------------------------------------
@check("impersonate_rest_header_and_ws_auth")
def _():
    v = Venue()
    v.stream = lambda ws, ven: stream_auth_then(ws, ven, [])
    with client(v) as c:
        s = session()
        s.set_impersonate("cv_vault1")
        c.query_balance(s)
        c.new_order(s, ORDER_IN)
        st = c.open_stream(s, [{"channel": "order"}])
        collect(st, 0.3)
        st.close()
        os_ = c.open_order_stream(s)
        collect(os_, 0.3)
        os_.close()
    h_get = v.requests("/api/query_balance")[0].headers.get("x-impersonate")
    h_post = v.requests("/api/new_order")[0].headers.get("x-impersonate")
    auth = [json.loads(x) for x in v.ws_log if x.startswith('{"auth"')]
    login = [json.loads(x) for x in v.ws_log if '"auth:login"' in x]
    ws_imp = auth[0]["auth"].get("impersonate") if auth else None
    login_imp = json.loads(login[0]["params"]).get("impersonate") if login else None
    good = h_get == h_post == ws_imp == login_imp == "cv_vault1"
    return good, f"GET={h_get} POST={h_post} ws-stream auth={ws_imp} ws-api login={login_imp}"


# ---- server time (§1.5, §3.3) -------------------------------------------------------------
for _label, _body in [("kline_time_json_string", lambda: json.dumps(str(int(time.time())))),
                      ("kline_time_decimal", lambda: f"{time.time():.3f}"),
                      ("kline_time_newline", lambda: f"{int(time.time())}\n")]:
    def _mk(body):
        def f():
            v = Venue()
            v.rest["/api/kline/time"] = lambda r: ok(body())
            with client(v) as c:
                e, off = error_of(c.sync_time)
            return e is None and abs(off) < 2000, describe(e) if e else f"offset_ms={off}"
        return f
    CHECKS[_label] = _mk(_body)


@check("retry_after_http_date")  # README: seconds or an HTTP date
def _():
    when = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=5)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    v = Venue()
    v.rest["/api/query_balance"] = lambda r: ok({"code": 429, "message": "slow down"}, 429, {"Retry-After": when})
    with client(v) as c:
        e, r = error_of(c.query_balance, session())
    return e is not None and 3000 <= e.retry_after_ms <= 6000, describe(e)


@check("open_orders_1200_rows_fit")  # §1.4: open orders limit max 1200 with default max_response_bytes
def _():
    rows = [dict(ORDER, id=11545819148 + i, cl_ord_id=f"sxmk-exit-{i:08d}-0000-0000-0000-000000000000") for i in range(1200)]
    body = json.dumps(dict(page(rows), code=0, message="success"), indent=1)
    v = Venue()
    v.rest["/api/query_open_orders"] = lambda r: ok(body)
    with client(v) as c:
        e, r = error_of(c.query_open_orders, session(), {"limit": 1200})
    return e is None, f"{len(body)} bytes: " + describe(e)


# ---- handshake details ---------------------------------------------------------------------
@check("hs_first_frame_in_same_packet_as_101")
def _():
    push = json.dumps({"seq": 1, "channel": "price", "symbol": "BTC-USD", "data": {"symbol": "BTC-USD", "mark_price": "7"}}).encode()
    async def h(reader, writer, req, srv):
        writer.write(ok_101(req) + frame(1, push))
        await writer.drain()
        await serve_session(reader, writer, srv)
    raw = RawWsServer(h)
    e, evs, took = open_public(raw, 1.0)
    return any(x.get("channel") == "price" for x in evs), f"{describe(e)} {[brief(x) for x in evs][:3]}"


def hs_headers(upgrade, connection):
    def f():
        async def h(reader, writer, req, srv):
            writer.write(("HTTP/1.1 101 Switching Protocols\r\n" + upgrade + "\r\n" + connection + "\r\n"
                          f"sec-websocket-accept: {accept_for(req['sec-websocket-key'])}\r\nServer: x\r\n\r\n").encode())
            await writer.drain()
            await serve_session(reader, writer, srv)
        raw = RawWsServer(h)
        e, evs, took = open_public(raw, 0.3)
        return e is None, f"[{upgrade} / {connection}] " + describe(e)
    return f


CHECKS["hs_header_lowercase_names_values"] = hs_headers("upgrade: WebSocket", "connection: upgrade")
CHECKS["hs_connection_token_list"] = hs_headers("Upgrade: websocket", "Connection: keep-alive, Upgrade")
CHECKS["hs_connection_token_list_reversed"] = hs_headers("Upgrade: websocket", "Connection: Upgrade, keep-alive")


@check("hs_redirect_not_followed")
def _():
    async def h(reader, writer, req, srv):
        writer.write(b"HTTP/1.1 301 Moved Permanently\r\nLocation: ws://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
    raw = RawWsServer(h)
    e, evs, took = open_public(raw, 0.1)
    return e is not None and raw.connects == 1, f"{describe(e)} attempts={raw.connects}"


@check("hs_refusal_body_kept")  # the venue's JSON reason on a refused upgrade
def _():
    async def h(reader, writer, req, srv):
        body = '{"code":429,"message":"too many connections from this IP"}'
        writer.write((f"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}").encode())
        await writer.drain()
    raw = RawWsServer(h)
    e, evs, took = open_public(raw, 0.1)
    body = getattr(e, "body", None)
    return e is not None and (("too many connections" in (e.message or "")) or ("too many connections" in (body or ""))), f"{describe(e)} body={body!r}"


@check("auth_answer_after_a_push")  # a push arriving before the auth answer
def _():
    async def beh(ws, ven):
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            f = json.loads(msg.data)
            if "auth" in f:
                await ws.send_str(json.dumps({"seq": 1, "channel": "price", "symbol": "BTC-USD", "data": {"symbol": "BTC-USD", "mark_price": "3"}}))
                await ws.send_str(json.dumps({"seq": 2, "channel": "auth", "data": {"code": 0, "msg": "success"}}))
                await ws.send_str(json.dumps({"seq": 3, "channel": "order", "data": ORDER}))
    v = Venue()
    v.stream = beh
    with client(v) as c:
        e, st = error_of(c.open_stream, session(), [{"channel": "price", "symbol": "BTC-USD"}, {"channel": "order"}])
        evs = collect(st, 1.0) if st else []
        if st:
            st.close()
    chans = [x.get("channel") for x in evs if x.get("channel") != "status"]
    return e is None and chans == ["price", "order"], f"{describe(e)} {chans}"


@check("order_stream_cancel_big_id_exact")
def _():
    v = Venue()
    with client(v) as c:
        st = c.open_order_stream(session())
        sent = st.cancel_order({"order_id": 9223372036854775807})
        evs = collect(st, 1.0, lambda x: x.get("final"))
        st.close()
    frames = [json.loads(x) for x in v.ws_log if '"order:cancel"' in x]
    params = frames[0]["params"] if frames else ""
    rs = [x for x in evs if x.get("channel") == "order_response"]
    return '"order_id":9223372036854775807' in params and rs and rs[-1]["final"], f"params={params} {[brief(x) for x in rs]}"


# ---- TLS chain / version --------------------------------------------------------------------
TMP = tempfile.mkdtemp(prefix="interop-tls2-")


def tls_v(ca, leaf, mod=None):
    cert, key = os.path.join(TMP, f"c{id(leaf)}.pem"), os.path.join(TMP, f"k{id(leaf)}.pem")
    leaf.private_key_and_cert_chain_pem.write_to_path(cert)
    leaf.private_key_pem.write_to_path(key)
    v = Venue(tls=(cert, key))
    if mod:
        mod(v.ssl_ctx)
    ca_pem = os.path.join(TMP, f"ca{id(ca)}.pem")
    ca.cert_pem.write_to_path(ca_pem)
    return v, ca_pem


@check("tls_intermediate_ca_chain")
def _():
    root = trustme.CA()
    inter = root.create_child_ca()
    v, _ = tls_v(inter, inter.issue_cert("127.0.0.1"))
    root_pem = os.path.join(TMP, "root.pem")
    root.cert_pem.write_to_path(root_pem)
    v.stream = lambda ws, ven: stream_auth_then(ws, ven, [])
    with client(v, ca_bundle_path=root_pem) as c:
        e1, r = error_of(c.query_balance, session())
        e2, st = error_of(c.open_stream, None, PUBLIC)
        if st:
            st.close()
    return e1 is None and e2 is None, f"rest={describe(e1)} wss={describe(e2)}"


@check("tls_1_2_only_server")
def _():
    ca = trustme.CA()
    def cap(ctx):
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    v, ca_pem = tls_v(ca, ca.issue_cert("127.0.0.1"), cap)
    v.stream = lambda ws, ven: stream_auth_then(ws, ven, [])
    with client(v, ca_bundle_path=ca_pem) as c:
        e1, r = error_of(c.query_balance, session())
        e2, st = error_of(c.open_stream, None, PUBLIC)
        if st:
            st.close()
    return e1 is None and e2 is None, f"rest={describe(e1)} wss={describe(e2)}"


@check("tls_rsa_leaf")
def _():
    ca = trustme.CA(key_type=trustme.KeyType.RSA)
    v, ca_pem = tls_v(ca, ca.issue_cert("127.0.0.1", key_type=trustme.KeyType.RSA))
    with client(v, ca_bundle_path=ca_pem) as c:
        e1, r = error_of(c.query_balance, session())
    return e1 is None, describe(e1)


@check("new_order_slow_answer_timeout_reached")  # a venue that answers after total_timeout_ms
def _():
    v = Venue()
    async def slow(r):
        await asyncio.sleep(4)
        return ok({"code": 0, "message": "success", "request_id": "late"})
    v.rest["/api/new_order"] = slow
    with client(v, total_timeout_ms=2000, read_timeout_ms=2000) as c:
        e, r = error_of(c.new_order, session(), ORDER_IN)
    time.sleep(2.5)
    good = (e is not None and e.code == perps.Code.TIMEOUT and e.may_have_reached_venue and e.x_request_id
            and e.cl_ord_id and len(v.requests("/api/new_order")) == 1)
    return good, describe(e) + f" x_request_id={getattr(e, 'x_request_id', None)} cl_ord_id={getattr(e, 'cl_ord_id', None)} sends={len(v.requests('/api/new_order'))}"


@check("rate_limit_refuse_burst")  # §3.2: burst 20 (library keeps a reserve of 2), then refused locally
def _():
    v = Venue()
    with client(v, rate_limit="refuse") as c:
        s = session()
        results = [error_of(c.query_balance, s)[0] for _ in range(25)]
    okc = sum(1 for e in results if e is None)
    refused = [e for e in results if e is not None]
    good = 15 <= okc <= 20 and all(e.code == perps.Code.RATE_LIMITED and e.retry_after_ms > 0 for e in refused)
    return good, f"sent={okc} refused={len(refused)} first refusal: {describe(refused[0]) if refused else None} venue saw {len(v.requests('/api/query_balance'))}"


@check("account_push_before_auth_answer")  # an order push the venue sends ahead of its auth answer
def _():
    async def beh(ws, ven):
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            f = json.loads(msg.data)
            if "auth" in f:
                await ws.send_str(json.dumps({"seq": 1, "channel": "order", "data": ORDER}))
                await ws.send_str(json.dumps({"seq": 2, "channel": "auth", "data": {"code": 200, "msg": "success"}}))
    v = Venue()
    v.stream = beh
    with client(v) as c:
        e, st = error_of(c.open_stream, session(), [{"channel": "order"}])
        evs = collect(st, 1.0) if st else []
        if st:
            st.close()
    chans = [x.get("channel") for x in evs if x.get("channel") != "status"]
    return e is None and chans == ["order"], f"{describe(e)} {[brief(x) for x in evs]}"


@check("order_outcome_after_reconnect_not_dropped")  # ack on connection 1, outcome on connection 2 (same session_id)
def _():
    pending = {}
    async def beh(ws, ven):
        n = ven.ws_connects["order"]
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            f = json.loads(msg.data)
            rid = f.get("request_id")
            if f.get("method") == "auth:login":
                await ws.send_str(json.dumps({"code": 0, "message": "success", "request_id": rid}))
                if n == 2 and "rid" in pending:
                    await asyncio.sleep(0.1)
                    await ws.send_str(json.dumps({"code": 0, "message": "success", "request_id": pending["rid"]}))
            elif f.get("method") == "order:new":
                pending["rid"] = rid
                await ws.send_str(json.dumps({"code": 0, "status": "accepted", "request_id": rid}))
                await ws.close(code=1011, message=b"gateway restart")
                return
    v = Venue()
    v.order_stream = beh
    with client(v) as c:
        st = c.open_order_stream(session())
        sent = st.new_order(ORDER_IN)
        evs = collect(st, 3.0, lambda x: x.get("channel") == "order_response" and x.get("final"))
        st.close()
    outs = [x for x in evs if x.get("channel") == "order_response" and x.get("request_id") == sent["request_id"]]
    finals = [x for x in outs if x.get("final")]
    return bool(finals), f"{[brief(x) for x in evs]}"


if __name__ == "__main__":
    sys.exit(run_checks(CHECKS, sys.argv[1:]))
