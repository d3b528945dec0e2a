"""WebSocket handshake refusals and oddities, and the documented 408 Close frame
(venue-api.md §2.1, §3.1, §3.2), with a hand-written WebSocket server (RawWsServer) so that
the venue's answers can be exactly what a test needs. Run: python check_ws_handshake.py [NAME...]"""
import asyncio
import json
import sys
import time

from common import client, session, error_of, describe, collect, brief, perps, registry, run_checks
from venue import Venue, RawWsServer, accept_for, frame, read_frame

CHECKS, check = registry()
PUBLIC = [{"channel": "price", "symbol": "BTC-USD"}]
CLOSE_408 = b'{"code":408,"message":"disconnecting due to not receive Pong within 5 minute period"}'


def ok_101(req, extra=""):
    return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept_for(req['sec-websocket-key'])}\r\n{extra}\r\n").encode()


def refusal(status, reason, retry_after=None, body=None):
    body = body if body is not None else json.dumps({"code": status, "message": reason})
    ra = f"Retry-After: {retry_after}\r\n" if retry_after is not None else ""
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"{ra}Connection: close\r\n\r\n{body}").encode()


async def serve_session(reader, writer, srv, pushes=(), then=None):
    """After a 101: answer auth / auth:login, send pushes, then run `then` (e.g. a Close)."""
    seq = 1
    async def after_first():
        nonlocal seq
        for p in pushes:
            writer.write(frame(1, json.dumps(p).encode()))
        await writer.drain()
        if then:
            await then(reader, writer)
    started = False
    while True:
        op, data = await read_frame(reader)
        srv.log.append((op, data[:200]))
        if op == 8:  # client close: echo and stop
            writer.write(frame(8, data[:2]))
            await writer.drain()
            return
        if op == 9:
            writer.write(frame(10, data))
            continue
        if op != 1:
            continue
        f = json.loads(data)
        if "auth" in f:
            writer.write(frame(1, json.dumps({"seq": seq, "channel": "auth", "data": {"code": 0, "msg": "success"}}).encode()))
            seq += 1
        if f.get("method") == "auth:login":
            writer.write(frame(1, json.dumps({"code": 0, "message": "success", "request_id": f["request_id"]}).encode()))
        await writer.drain()
        if not started:
            started = True
            asyncio.ensure_future(after_first())


def raw_client(raw, **opts):
    v = Venue()  # REST side (unused by these checks but gives URLs)
    return client(v, stream_url=raw.url + "/ws-stream/v1", order_stream_url=raw.url + "/ws-api/v1", **opts)


def open_public(raw, secs=2.0, **opts):
    with raw_client(raw, **opts) as c:
        t0 = time.time()
        e, st = error_of(c.open_stream, None, PUBLIC)
        took = time.time() - t0
        evs = collect(st, secs) if st else []
        if st:
            st.close()
    return e, evs, took


# ---- refusals of the upgrade --------------------------------------------------------------
def refusal_check(status, reason, retry_after):
    def f():
        async def h(reader, writer, req, srv):
            writer.write(refusal(status, reason, retry_after))
            await writer.drain()
        raw = RawWsServer(h)
        e, evs, took = open_public(raw, 0.1)
        good = (e is not None and e.http_status == status and str(status) in e.message
                and (retry_after is None or status not in (429, 503) or e.retry_after_ms == int(retry_after) * 1000))
        return good, f"{describe(e)} attempts={raw.connects} took={took:.2f}s"
    return f


for _st, _rs in [(401, "Unauthorized"), (403, "Forbidden"), (429, "Too Many Requests"), (503, "Service Unavailable")]:
    CHECKS[f"upgrade_{_st}"] = refusal_check(_st, _rs, None)
    CHECKS[f"upgrade_{_st}_retry_after"] = refusal_check(_st, _rs, "3")


def refusal_on_reconnect(status, reason, retry_after, expect_stop):
    """First connection fine; the venue drops it; every later upgrade is refused."""
    def f():
        async def h(reader, writer, req, srv):
            if srv.connects == 1:
                writer.write(ok_101(req))
                await writer.drain()
                async def drop(r, w):
                    await asyncio.sleep(0.3)
                    w.transport.abort()
                await serve_session(reader, writer, srv, then=drop)
            else:
                srv.log.append(("attempt", time.time()))
                writer.write(refusal(status, reason, retry_after))
                await writer.drain()
        raw = RawWsServer(h)
        # the library's default backoff (250 ms .. 30 s), not the suite's faster one
        with raw_client(raw, stream_reconnect_min_ms=250, stream_reconnect_max_ms=30000) as c:
            st = c.open_stream(None, PUBLIC)
            evs = collect(st, 8.0, lambda e: e.get("state") == "failed")
            st.close()
        attempts = [x[1] for x in raw.log if isinstance(x, tuple) and x[0] == "attempt"]
        gaps = [round(b - a, 2) for a, b in zip(attempts, attempts[1:])]
        states = [e.get("state") for e in evs if e.get("channel") == "status"]
        failed = "failed" in states
        if expect_stop:
            good = failed and len(attempts) <= 2
        else:  # Retry-After 3 s must space the attempts by >= 3 s
            good = all(g >= 2.9 for g in gaps) if retry_after else True
        rf = [e for e in evs if e.get("state") in ("reconnect_failed", "failed")][:2]
        return good, f"attempts={len(attempts)} gaps={gaps} states={states[:8]} first={[brief(e) for e in rf]}"
    return f


CHECKS["reconnect_upgrade_401_stops"] = refusal_on_reconnect(401, "Unauthorized", None, True)
CHECKS["reconnect_upgrade_403_stops"] = refusal_on_reconnect(403, "Forbidden", None, True)
CHECKS["reconnect_upgrade_429_retry_after_3"] = refusal_on_reconnect(429, "Too Many Requests", "3", False)
CHECKS["reconnect_upgrade_503_retry_after_3"] = refusal_on_reconnect(503, "Service Unavailable", "3", False)


# ---- oddities in a 101 --------------------------------------------------------------------
def odd_101(make, expect_fail=True, pushes=True):
    def f():
        async def h(reader, writer, req, srv):
            writer.write(make(req))
            await writer.drain()
            await serve_session(reader, writer, srv, pushes=[
                {"seq": 1, "channel": "price", "symbol": "BTC-USD", "data": {"symbol": "BTC-USD", "mark_price": "1"}}])
        raw = RawWsServer(h)
        e, evs, took = open_public(raw, 1.0)
        got = [brief(x) for x in evs][:3]
        return ((e is not None) if expect_fail else (e is None)), f"{describe(e)} attempts={raw.connects} events={got}"
    return f


CHECKS["hs_bad_accept"] = odd_101(lambda req: (
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Accept: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").encode())
CHECKS["hs_missing_accept"] = odd_101(lambda req: (
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n").encode())
CHECKS["hs_missing_upgrade_header"] = odd_101(lambda req: (
    "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
    f"Sec-WebSocket-Accept: {accept_for(req['sec-websocket-key'])}\r\n\r\n").encode())
CHECKS["hs_200_not_101"] = odd_101(lambda req: refusal(200, "OK", body='{"code":0,"message":"success"}'))
CHECKS["hs_unasked_permessage_deflate"] = odd_101(lambda req: ok_101(req, "Sec-WebSocket-Extensions: permessage-deflate\r\n"))
CHECKS["hs_unasked_subprotocol"] = odd_101(lambda req: ok_101(req, "Sec-WebSocket-Protocol: json\r\n"))


@check("hs_client_request_headers")  # what the library asks for (informational)
def _():
    async def h(reader, writer, req, srv):
        writer.write(ok_101(req))
        await writer.drain()
        await serve_session(reader, writer, srv)
    raw = RawWsServer(h)
    open_public(raw, 0.2)
    req = raw.requests[0]
    asked = {k: v for k, v in req.items() if k.startswith("sec-websocket") and k != "sec-websocket-key"}
    # no extension/subprotocol asked, so any offered one must be refused (RFC 6455 §4.1)
    return True, f"{req['_line']} {asked}"


@check("compressed_frame_rsv1_after_unasked_deflate")
def _():
    import zlib
    async def h(reader, writer, req, srv):
        writer.write(ok_101(req, "Sec-WebSocket-Extensions: permessage-deflate\r\n"))
        await writer.drain()
        async def send_compressed(r, w):
            co = zlib.compressobj(wbits=-15)
            payload = co.compress(json.dumps({"seq": 1, "channel": "price", "symbol": "BTC-USD", "data": {"symbol": "BTC-USD", "mark_price": "2"}}).encode()) + co.flush(zlib.Z_SYNC_FLUSH)
            payload = payload[:-4]
            w.write(bytes([0x80 | 0x40 | 1, len(payload)]) + payload)
            await w.drain()
        await serve_session(reader, writer, srv, then=send_compressed)
    raw = RawWsServer(h)
    e, evs, took = open_public(raw, 1.0)
    got = [brief(x) for x in evs][:4]
    # good: the handshake was refused, or the RSV1 frame was not taken as a price push
    good = e is not None or not any(x.get("channel") == "price" for x in evs)
    return good, f"{describe(e)} events={got}"


# ---- the documented 408 Close frame (§2.1) ------------------------------------------------
def close_check(payload, label):
    def f():
        async def h(reader, writer, req, srv):
            writer.write(ok_101(req))
            await writer.drain()
            if srv.connects == 1:
                async def close(r, w):
                    await asyncio.sleep(0.3)
                    w.write(frame(8, payload))
                    await w.drain()
                    await asyncio.sleep(3)  # keep the socket open: the client must act on the Close
                await serve_session(reader, writer, srv, then=close)
            else:
                await serve_session(reader, writer, srv)
        raw = RawWsServer(h)
        with raw_client(raw) as c:
            st = c.open_stream(None, PUBLIC)
            evs = collect(st, 3.0, lambda e: e.get("state") == "reconnected")
            st.close()
        disc = [e for e in evs if e.get("state") == "disconnected"]
        d = disc[0] if disc else {}
        reason = str(d.get("close_reason", ""))
        good = bool(disc) and "408" in reason and "Pong" in reason and raw.connects >= 2
        return good, (f"[{label}] close_code={d.get('close_code')} close_reason={reason!r} reason={d.get('reason')!r} "
                      f"reconnects={raw.connects} states={[e.get('state') for e in evs if e.get('channel') == 'status']}")
    return f


CHECKS["close_408_code1000_plus_json"] = close_check((1000).to_bytes(2, "big") + CLOSE_408, "1000 + JSON")
CHECKS["close_408_code4408_plus_json"] = close_check((4408).to_bytes(2, "big") + CLOSE_408, "4408 + JSON")
CHECKS["close_408_json_text_only"] = close_check(CLOSE_408, "JSON text alone")


@check("close_408_on_order_stream_unanswered")  # an order in flight when the 408 Close comes
def _():
    async def h(reader, writer, req, srv):
        writer.write(ok_101(req))
        await writer.drain()
        seen_order = asyncio.Event()
        while True:
            op, data = await read_frame(reader)
            if op == 8:
                return
            if op != 1:
                continue
            f = json.loads(data)
            if f.get("method") == "auth:login":
                writer.write(frame(1, json.dumps({"code": 0, "message": "success", "request_id": f["request_id"]}).encode()))
            elif f.get("method") == "order:new" and srv.connects == 1:
                writer.write(frame(1, json.dumps({"code": 0, "status": "accepted", "request_id": f["request_id"]}).encode()))
                writer.write(frame(8, CLOSE_408))
                await writer.drain()
                await asyncio.sleep(3)
                return
            await writer.drain()
    raw = RawWsServer(h)
    order = {"symbol": "BTC-USD", "side": "buy", "order_type": "limit", "qty": "0.001", "price": "65000",
             "time_in_force": "alo", "reduce_only": False}
    with raw_client(raw) as c:
        st = c.open_order_stream(session())
        sent = st.new_order(order)
        evs = collect(st, 3.0, lambda e: e.get("state") == "reconnected")
        st.close()
    disc = [e for e in evs if e.get("state") == "disconnected"]
    d = disc[0] if disc else {}
    good = bool(disc) and sent["request_id"] in (d.get("unanswered") or [])
    return good, f"sent={sent['request_id'][:8]} disconnected={ {k: d.get(k) for k in ('close_code', 'close_reason', 'unanswered')} } events={[brief(e) for e in evs][:5]}"


if __name__ == "__main__":
    sys.exit(run_checks(CHECKS, sys.argv[1:]))
