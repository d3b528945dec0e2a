"""A small StandX-like venue written from /work/shared/spec only (venue-api.md,
venue-facts.md, seed-auth-and-signing.md), for interoperability tests of libperps.

Runs in a background thread of the calling process (so a repro script is one file):

    v = Venue(tls=None | ("cert.pem", "key.pem"))   # REST + both WebSockets on one port
    v.rest["/api/cancel_orders"] = lambda req: (200, "[]", {})
    v.stream = async def (ws, venue) -> None          # /ws-stream/v1 behaviour
    v.order_stream = async def (ws, venue) -> None    # /ws-api/v1 behaviour
    raw = RawWsServer(handler)                        # hand-written handshakes (oddities)

REST handlers get a Req (method, path, query, headers, body) and return
(status, body_text, headers). Every signed request's Ed25519 signature is verified with
PyNaCl against the session's public key (seed-auth-and-signing.md "Body signature");
a bad one answers 403 as venue-facts.md says.
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import socket
import ssl
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

import nacl.exceptions
import nacl.signing
from aiohttp import WSMsgType, web

TOKEN = "interop-token-0123456789abcdef"
SEED_HEX = "11" * 32  # the session's Ed25519 seed (hex), handed to Session.from_api_key
VERIFY_KEY = nacl.signing.SigningKey(bytes.fromhex(SEED_HEX)).verify_key


@dataclass
class Req:
    method: str
    path: str
    query: Dict[str, str]
    headers: Dict[str, str]
    body: str
    sig_ok: Optional[bool] = None


def ok(body: Any, status: int = 200, headers: Optional[Dict[str, str]] = None):
    return (status, body if isinstance(body, str) else json.dumps(body), headers or {})


# ---- documented default answers (venue-api.md §1.3-§1.5) ----------------------------------

ORDER = {  # §1.4 query_order row
    "id": 11545819148, "cl_ord_id": "c1", "symbol": "BTC-USD", "side": "buy",
    "order_type": "limit", "time_in_force": "gtc", "status": "open", "price": "65000.5",
    "qty": "0.001", "fill_qty": "0", "fill_avg_price": "0", "leverage": "10", "margin": "6.5",
    "avail_locked": "6.5", "reduce_only": False, "position_id": 1, "liq_id": 0,
    "created_block": -1, "closed_block": -1, "payload": None, "remark": "", "source": "user",
    "user": "bsc_0xabc", "created_at": "2026-01-13T10:00:00.123456789Z",
    "updated_at": "2026-01-13T10:00:00.123456Z",
}
TRADE = {"id": 9001, "order_id": 11545819148, "symbol": "BTC-USD", "side": "buy",
         "price": "65000.5", "qty": "0.001", "value": "65.0005", "fee_asset": "DUSD",
         "fee_qty": "0.026", "pnl": "0", "user": "bsc_0xabc",
         "created_at": "2026-01-13T10:00:00Z", "updated_at": "2026-01-13T10:00:00Z"}
POSITION = {"id": 7, "symbol": "BTC-USD", "qty": "-0.002", "entry_price": "65000",
            "entry_value": "130", "mark_price": "65010", "position_value": "130.02",
            "leverage": "10", "margin_mode": "cross", "margin_asset": "DUSD",
            "initial_margin": "13", "holding_margin": "13", "maint_margin": "0.6", "mmr": "0.05",
            "liq_price": "70000", "bankruptcy_price": "71000", "realized_pnl": "0", "upnl": "-0.02",
            "status": "open", "time": "2026-01-13T10:00:00Z", "created_at": "2026-01-13T10:00:00Z",
            "updated_at": "2026-01-13T10:00:00Z", "user": "bsc_0xabc", "required_margin": "13"}
BALANCE = {"isolated_balance": "0", "isolated_upnl": "0", "cross_balance": "1000",
           "cross_margin": "13", "cross_upnl": "-0.02", "locked": "6.5",
           "cross_available": "980.48", "balance": "1000", "upnl": "-0.02", "equity": "999.98",
           "pnl_freeze": "0", "pnl_24h": "1.5"}
SYMBOL_INFO = {"symbol": "BTC-USD", "base_asset": "BTC", "quote_asset": "DUSD",
               "base_decimals": 9, "quote_decimals": 9, "price_tick_decimals": 2,
               "qty_tick_decimals": 4, "min_order_qty": "0.0001", "max_order_qty": "100",
               "max_position_size": "1000", "max_open_orders": "100", "def_leverage": "10",
               "max_leverage": "40", "maker_fee": "0.0001", "taker_fee": "0.0004",
               "price_cap_ratio": "0.05", "price_floor_ratio": "0.05",
               "depth_ticks": "0.01,0.1,1", "enabled": True,
               "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
PRICE = {"base": "BTC", "quote": "DUSD", "symbol": "BTC-USD", "index_price": "65000",
         "mark_price": "65001", "last_price": None, "mid_price": None, "spread_bid": None,
         "spread_ask": None, "time": "2026-01-13T10:00:00.123456789Z"}
BOOK = {"asks": [["65002", "1"], ["65001.5", "2"], ["65010", "0.5"]],
        "bids": [["64990", "1"], ["65000", "3"], ["64999.75", "2"]], "symbol": "BTC-USD"}


def page(rows):  # §1.4 list envelope
    return {"page_size": len(rows), "result": rows, "total": len(rows)}


def default_rest() -> Dict[str, Callable[[Req], Tuple[int, str, Dict[str, str]]]]:
    success = lambda r: ok({"code": 0, "message": "success", "request_id": str(uuid.uuid4())})
    return {
        "/api/new_order": success,
        "/api/cancel_order": success,
        "/api/cancel_orders": lambda r: ok([]),
        "/api/change_leverage": success,
        "/api/change_margin_mode": success,
        "/api/query_order": lambda r: ok(ORDER),
        "/api/query_orders": lambda r: ok(page([ORDER])),
        "/api/query_open_orders": lambda r: ok(page([ORDER])),
        "/api/query_trades": lambda r: ok(page([TRADE])),
        "/api/query_positions": lambda r: ok([POSITION]),
        "/api/query_balance": lambda r: ok(BALANCE),
        "/api/query_position_config": lambda r: ok({"symbol": "BTC-USD", "leverage": 10, "margin_mode": "cross"}),
        "/api/query_symbol_info": lambda r: ok([SYMBOL_INFO]),
        "/api/query_symbol_price": lambda r: ok(PRICE),
        "/api/query_depth_book": lambda r: ok(BOOK),
        "/api/query_funding_history": lambda r: ok([{"id": 1, "user": "bsc_0xabc", "asset": "DUSD",
            "symbol": "BTC-USD", "qty": "-0.01", "txn_type": "funding_fee",
            "created_at": "2026-07-28T00:00:00Z", "updated_at": "2026-07-28T00:00:00Z"}]),
        "/api/kline/time": lambda r: ok(str(int(time.time()))),
        "/api/health": lambda r: ok("OK"),
    }


SIGNED = {"/api/new_order", "/api/cancel_order", "/api/cancel_orders", "/api/change_leverage",
          "/api/change_margin_mode"}


def sign_version(headers: Dict[str, str]) -> str:
    """venue-api.md §6 item 4: the docs' `x-request-sign-version`, [SB]'s `x-request-version`,
    or none (the WS example omits it; the server may default it): all read as the version."""
    return headers.get("x-request-sign-version") or headers.get("x-request-version") or "v1"


def verify_signature(headers: Dict[str, str], body: str, key=VERIFY_KEY) -> bool:
    try:
        msg = "{},{},{},{}".format(sign_version(headers), headers["x-request-id"],
                                   headers["x-request-timestamp"], body)
        key.verify(msg.encode(), base64.b64decode(headers["x-request-signature"]))
        return True
    except (KeyError, ValueError, nacl.exceptions.BadSignatureError):
        return False


# ---- WebSocket helpers --------------------------------------------------------------------

async def stream_auth_then(ws, venue, pushes: List[Any], auth_answer: Optional[Any] = None,
                           hold: float = 30.0):
    """A ws-stream/v1 behaviour: read frames; answer an auth frame (§2.2), then send
    `pushes` (dicts/strings), then keep the connection (pings come from aiohttp)."""
    sent = False
    seq = 1
    async def send_pushes():
        for p in pushes:
            await ws.send_str(p if isinstance(p, str) else json.dumps(p))
            await asyncio.sleep(0.02)
    async for msg in ws:
        if msg.type != WSMsgType.TEXT:
            continue
        venue.ws_log.append(msg.data)
        frame = json.loads(msg.data)
        if "auth" in frame:
            ans = auth_answer if auth_answer is not None else {
                "seq": seq, "channel": "auth", "data": {"code": 200, "msg": "success"}}
            await ws.send_str(ans if isinstance(ans, str) else json.dumps(ans))
            seq += 1
        if not sent and ("subscribe" in frame or "auth" in frame):
            sent = True
            asyncio.ensure_future(send_pushes())


async def order_stream_default(ws, venue, ack_style="status", login_code=0):
    """ws-api/v1 (§2.3): auth:login answered, each order acked then answered success."""
    async for msg in ws:
        if msg.type != WSMsgType.TEXT:
            continue
        venue.ws_log.append(msg.data)
        f = json.loads(msg.data)
        rid = f.get("request_id")
        if f.get("method") == "auth:login":
            await ws.send_str(json.dumps({"code": login_code, "message": "success", "request_id": rid}))
        elif f.get("method") in ("order:new", "order:cancel"):
            ack = {"code": 0, "request_id": rid}
            if ack_style == "status":
                ack["status"] = "accepted"
            elif ack_style == "message":
                ack["message"] = "accepted"
            else:  # [PB] fixture: code 202
                ack = {"code": 202, "message": "accepted", "request_id": rid}
            await ws.send_str(json.dumps(ack))
            await asyncio.sleep(0.05)
            await ws.send_str(json.dumps({"code": 0, "message": "success", "request_id": rid}))


class Venue:
    def __init__(self, tls: Optional[Tuple[str, str]] = None, heartbeat: Optional[float] = 10.0):
        self.rest = default_rest()
        self.log: List[Req] = []
        self.ws_log: List[str] = []
        self.ws_connects = {"stream": 0, "order": 0}
        # Accepted bearer tokens and the Ed25519 key that signs for each (signin_venue.py adds
        # the tokens its login issues), and expiries (Unix seconds) of those that have one.
        self.keys: Dict[str, Any] = {TOKEN: VERIFY_KEY}
        self.expires: Dict[str, float] = {}
        self.stream = lambda ws, v: stream_auth_then(ws, v, [])
        self.order_stream = order_stream_default
        self.heartbeat = heartbeat
        self.ssl_ctx = None
        if tls:
            self.ssl_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self.ssl_ctx.load_cert_chain(*tls)
        self.loop = asyncio.new_event_loop()
        self.port = _free_port()
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.perps_url = self.url + "/perps"
        self.base_url = self.url + "/auth"
        started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self.thread.start()
        started.wait(10)

    def _run(self, started):
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_route("*", "/perps/ws-stream/v1", self._ws("stream"))
        app.router.add_route("*", "/perps/ws-api/v1", self._ws("order"))
        app.router.add_route("*", "/{tail:.*}", self._http)
        runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", self.port, ssl_context=self.ssl_ctx)
        self.loop.run_until_complete(site.start())
        started.set()
        self.loop.run_forever()

    async def _http(self, request: web.Request):
        body = await request.text()
        path = request.path[len("/perps"):] if request.path.startswith("/perps") else request.path
        req = Req(request.method, path, dict(request.query),
                  {k.lower(): v for k, v in request.headers.items()}, body)
        bearer = req.headers.get("authorization", "")
        token = bearer[len("Bearer "):] if bearer.startswith("Bearer ") else None
        if path in SIGNED:
            req.sig_ok = verify_signature(req.headers, body, self.keys.get(token, VERIFY_KEY))
        self.log.append(req)
        if path.startswith("/api/") and path not in ("/api/query_symbol_info", "/api/query_symbol_price",
                "/api/query_depth_book", "/api/kline/time", "/api/health"):
            if token not in self.keys:
                return web.Response(status=401, text='{"code":401,"message":"unauthorized"}')
            if token in self.expires and self.expires[token] <= self.now():
                return web.Response(status=401, text='{"code":401,"message":"token expired"}')
        if req.sig_ok is False:
            return web.Response(status=403, text='{"code":403,"message":"invalid signature"}')
        handler = self.rest.get(path)
        if handler is None:
            return web.Response(status=404, text='{"code":404,"message":"not found"}')
        res = handler(req)
        if asyncio.iscoroutine(res):
            res = await res
        status, text, headers = res
        headers = dict(headers)
        headers.setdefault("Content-Type", "application/json")
        return web.Response(status=status, text=text, headers=headers)

    def _ws(self, which):
        async def handler(request: web.Request):
            self.ws_connects[which] += 1
            ws = web.WebSocketResponse(heartbeat=self.heartbeat, autoping=True)
            await ws.prepare(request)
            behaviour = self.stream if which == "stream" else self.order_stream
            try:
                await behaviour(ws, self)
            except Exception as e:  # a behaviour's failure is logged, not fatal
                self.ws_log.append(f"behaviour error: {e!r}")
            return ws
        return handler

    def now(self) -> float:
        """The venue's clock (signin_venue.SigninVenue can set it off the real one)."""
        return time.time()

    def requests(self, path):
        return [r for r in self.log if r.path == path]


# ---- a raw TCP server for hand-written WebSocket handshakes ---------------------------------

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_for(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def frame(opcode: int, payload: bytes) -> bytes:
    """An unmasked server frame (RFC 6455 §5.2), FIN set."""
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + n.to_bytes(2, "big")
    else:
        head += bytes([127]) + n.to_bytes(8, "big")
    return head + payload


async def read_frame(reader) -> Tuple[int, bytes]:
    """One client frame (masked), unmasked; (opcode, payload)."""
    h = await reader.readexactly(2)
    op = h[0] & 0x0F
    n = h[1] & 0x7F
    if n == 126:
        n = int.from_bytes(await reader.readexactly(2), "big")
    elif n == 127:
        n = int.from_bytes(await reader.readexactly(8), "big")
    mask = await reader.readexactly(4) if h[1] & 0x80 else b"\0\0\0\0"
    data = await reader.readexactly(n)
    return op, bytes(b ^ mask[i % 4] for i, b in enumerate(data))


async def read_request(reader) -> Dict[str, str]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {"_line": lines[0]}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return headers


class RawWsServer:
    """handler(reader, writer, request_headers, server) -> coroutine; one per connection."""

    def __init__(self, handler, ssl_ctx=None):
        self.handler = handler
        self.connects = 0
        self.requests: List[Dict[str, str]] = []
        self.log: List[Any] = []
        self.loop = asyncio.new_event_loop()
        self.port = _free_port()
        self.url = ("wss" if ssl_ctx else "ws") + f"://127.0.0.1:{self.port}"
        self.ssl_ctx = ssl_ctx
        started = threading.Event()
        threading.Thread(target=self._run, args=(started,), daemon=True).start()
        started.wait(10)

    def _run(self, started):
        asyncio.set_event_loop(self.loop)
        async def serve(reader, writer):
            self.connects += 1
            try:
                req = await read_request(reader)
                self.requests.append(req)
                await self.handler(reader, writer, req, self)
            except Exception as e:
                self.log.append(repr(e))
            finally:
                try:
                    writer.close()
                except Exception:
                    pass
        srv = self.loop.run_until_complete(
            asyncio.start_server(serve, "127.0.0.1", self.port, ssl=self.ssl_ctx))
        started.set()
        self.loop.run_forever()


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
