"""Repro: the venue's documented 408 Close body sent as the whole Close payload (no 2-byte
status code before it). venue-api.md §2.1 / §3.1 [DOC-J]: "closes with a frame body
{code:408, message:"disconnecting due to not receive Pong within 5 minute period"}".
Shows what the library reports in its `disconnected` event and what it sent back."""
import asyncio, time
from common import client, collect, brief
from venue import RawWsServer, frame
from check_ws_handshake import ok_101, serve_session, raw_client, CLOSE_408, PUBLIC

async def h(reader, writer, req, srv):
    writer.write(ok_101(req)); await writer.drain()
    async def close(r, w):
        await asyncio.sleep(0.3)
        w.write(frame(8, CLOSE_408)); await w.drain()   # payload = the JSON text alone
        await asyncio.sleep(2)
    await serve_session(reader, writer, srv, then=close if srv.connects == 1 else None)

raw = RawWsServer(h)
with raw_client(raw) as c:
    st = c.open_stream(None, PUBLIC)
    for e in collect(st, 2.5, lambda e: e.get("state") == "reconnected"):
        print(brief(e))
    st.close()
print("frames the client sent on connection 1 (opcode, payload):", [x for x in raw.log if isinstance(x, tuple) and x[0] == 8])
