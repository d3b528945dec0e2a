#!/usr/bin/env python3
"""Writes the seed corpus in fuzz/seeds/<target>/ (checked in; rerun only to change it).

Keys and constants match fuzz_targets/common.rs: the venue's P-256 key is the scalar of 32
bytes 0x07, the session's Ed25519 seed is 32 bytes 0x09, NOW is 1900000000, kid "fuzz-kid".
Needs the `cryptography` package, 43 or later: the venue's ES256 signatures use RFC 6979
nonces (`deterministic_signing`), so a rerun writes the same bytes and a diff shows only
what an edit to this file changed.
"""
import base64, json, os, pathlib
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, utils
from cryptography.hazmat.primitives import hashes, serialization

HERE = pathlib.Path(__file__).resolve().parent / "seeds"
NOW, KID = 1_900_000_000, "fuzz-kid"
BSC_ADDRESS = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58(data: bytes) -> str:
    n, out = int.from_bytes(data, "big"), ""
    while n:
        n, r = divmod(n, 58)
        out = B58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


venue = ec.derive_private_key(int.from_bytes(bytes([7] * 32), "big"), ec.SECP256R1())
numbers = venue.public_key().public_numbers()
jwk = {"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "x": b64u(numbers.x.to_bytes(32, "big")),
       "y": b64u(numbers.y.to_bytes(32, "big")), "kid": KID}
certs = json.dumps({"keys": [jwk]}, separators=(",", ":"))
seed9 = ed25519.Ed25519PrivateKey.from_private_bytes(bytes([9] * 32))
request_id = b58(seed9.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


def jws(header: str, payload: str) -> str:
    signing_input = f"{b64u(header.encode())}.{b64u(payload.encode())}"
    r, s = utils.decode_dss_signature(venue.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256(), deterministic_signing=True)))
    return f"{signing_input}.{b64u(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


header = json.dumps({"alg": "ES256", "typ": "JWT", "kid": KID}, separators=(",", ":"))
MESSAGE = ("fuzz.example wants you to sign in with your Ethereum account:\n" + BSC_ADDRESS +
           "\n\nSign in to the fuzz venue.\n\nURI: https://fuzz.example\nVersion: 1\nChain ID: 56\n"
           "Nonce: fuzzn0nce1\nIssued At: 2030-03-17T17:46:40Z\nRequest ID: " + request_id)
payload = json.dumps({"domain": "fuzz.example", "uri": "https://fuzz.example", "statement": "Sign in to the fuzz venue.",
                      "version": "1", "chainId": 56, "nonce": "fuzzn0nce1", "issuedAt": "2030-03-17T17:46:40Z",
                      "address": BSC_ADDRESS, "requestId": request_id, "message": MESSAGE,
                      "iat": NOW, "exp": NOW + 180}, separators=(",", ":"))
valid_challenge = jws(header, payload)

LIMIT = '{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}'
FULL = ('{"symbol":"ETH-USD","side":"sell","order_type":"limit","qty":"1.50","price":"3000.25","time_in_force":"alo",'
        '"reduce_only":true,"cl_ord_id":"abc-1","margin_mode":"isolated","leverage":10,"tp_price":"3500","sl_price":"2500"}')
MARKET = '{"symbol":"SOL-USD","side":"buy","order_type":"market","qty":"3","time_in_force":"ioc","reduce_only":false}'

seeds = {
    "order": [LIMIT, FULL, MARKET, LIMIT.replace('"0.01"', "0.01"), LIMIT.replace("reduce_only", "reduceOnly"),
              LIMIT[:-1] + ',"reduce_only":true}', "[]", "{}", " { } ",
              # Control characters in a quoted value: the message escapes them (a NUL cannot cross the C ABI).
              LIMIT.replace('"buy"', '"\\u0000"'), LIMIT.replace('"BTC-USD"', '"a\\nb"'),
              # A market order without time_in_force: refused before sending (venue-facts lists it
              # as required; 2871c82).
              MARKET.replace(',"time_in_force":"ioc"', '')],
    "sign_body_into": [b"", b"{}", LIMIT.encode(), b"\xff\xfe", "héllo ✓".encode(), bytes(range(64))],
    "challenge": [b"\x00" + valid_challenge.encode(), b"\x00a.b.c", b"\x00" + valid_challenge.replace(KID, "x").encode(),
                  b"\x01" + header.encode() + b"\xff" + payload.encode(),
                  b"\x01" + b'{"alg":"none"}' + b"\xff" + payload.encode(),
                  b"\x02" + header.encode() + b"\xff" + payload.encode(),
                  # A member name twice, and a message that names another domain than its claims.
                  b"\x01" + header.encode() + b"\xff" + payload.replace('{', '{"requestId":"x",', 1).encode(),
                  b"\x01" + header.encode() + b"\xff" + payload.replace("fuzz.example wants", "evil.example wants").encode()],
    "certs": [certs, '{"keys":[]}', json.dumps({"keys": [dict(jwk, kid="other"), jwk]}), json.dumps({"keys": [dict(jwk, kty="RSA")]}),
              json.dumps({"keys": [{k: v for k, v in jwk.items() if k != "kid"}]})],
    "keys": ["ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
             "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
             b58(bytes([9] * 32)), b58(bytes([9] * 32) + bytes(32)), "[" + ",".join(["9"] * 32) + "]",
             "[" + ",".join(["9"] * 64) + "]", "0x" + "09" * 64, "not a key", "[256]",
             # Found by CI (29b8096): an input repeating the library's own error wording is not a leaked key.
             "\u00a0 Ed25519 private key is not valid base58 (or hex, or a JSON a"],
    "response": [b"\x00" + b'{"code":0,"message":"success"}', b"\x00" + b'{"code":10001,"message":"no"}', b"\x00[]",
                 b"\x00" + b'{"code":"0"}', b"\x00" + b'{"success":false,"message":"insufficient balance"}',
                 b"\x00" + b'{"code":0,"success":false}', b"\x00" + b'{"success":false,"msg":"the venue refused with code 500"}',
                 b"\x01HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"code\":0}",
                 b"\x01HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\n{}",
                 b"\x01HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n{\"code\":0}\r\n0\r\n\r\n",
                 b"\x01HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/\r\nContent-Length: 0\r\n\r\n",
                 # A change's answer with no code that does not say success; another cl_ord_id;
                 # a time-out and a refusal whose code is a server error (outcome unknown).
                 b"\x00" + b'{"message":"alo order rejected","request_id":"r"}', b"\x00" + b'{"success":true,"msg":"placed"}', b"\x00" + b'{"success":true}',
                 b"\x00" + b'{"code":0,"cl_ord_id":"venue-1"}', b"\x00" + b'{"code":0,"cl_ord_id":"fuzz-1"}',
                 b"\x01HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n",
                 b"\x01HTTP/1.1 400 Bad Request\r\nContent-Length: 14\r\n\r\n{\"code\":\"503\"}",
                 b"\x02" + json.dumps({"token": "tok", "chain": "bsc", "address": BSC_ADDRESS}).encode(),
                 b"\x02" + json.dumps({"token": "a.eyJleHAiOjQxMDI0NDQ4MDB9.c", "chain": "bsc", "address": BSC_ADDRESS.lower()}).encode(),
                 b'\x02{"success":false,"message":"signature expired"}', b'\x02{"code":"10002","msg":"no"}',
                 b'\x03{"success":true,"signedData":"@@CHALLENGE@@"}', b'\x03{"success":false}',
                 b"\x041700000000", b"\x04 1700000000\n", b"\x049223372036854775807", b"\x05" + certs.encode()],
    # Market-stream frames (venue-api.md §2.2) joined by 0xFF, several per input so that
    # `seq` is followed across frames.
    "stream_push": [b"\xff".join(frames) for frames in [
        [b'{"seq":1,"channel":"auth","data":{"code":200,"msg":"success"}}',
         b'{"seq":2,"channel":"price","symbol":"BTC-USD","data":{"base":"BTC","quote":"DUSD","symbol":"BTC-USD",'
         b'"index_price":"65000.1","mark_price":"65000.2","last_price":null,"mid_price":"65000","spread":["64999.5",'
         b'"65000.5"],"time":"2026-01-17T08:00:00.123456789Z"}}',
         b'{"seq":3,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["65010.3","1.5"],["65009.10","2"],'
         b'["65011","0.1"]],"bids":[["64990.5","1"],["64991","2"],["64990.50","3"]],"symbol":"BTC-USD"}}'],
        [b'{"seq":7,"channel":"depth_book","symbol":"ETH-USD","data":{"asks":[],"bids":[["1e3","1"],["-2","1"]],'
         b'"symbol":"ETH-USD","sequence":9,"time":"2026-01-17T08:00:00Z"}}',
         b'{"seq":5,"channel":"depth_book","symbol":"ETH-USD","data":{"asks":[["3000.25","4"]],"bids":[]}}',
         b'{"seq":9,"channel":"public_trade","symbol":"ETH-USD","data":{"price":"3000","qty":"0.1","is_buyer_taker":true}}'],
        [b'{"seq":1,"channel":"order","data":{"id":11545819148,"cl_ord_id":"c-1","symbol":"BTC-USD","side":"buy",'
         b'"order_type":"limit","time_in_force":"alo","status":"open","price":"65000","qty":"0.01","fill_qty":"0"}}',
         b'{"seq":2,"channel":"position","data":{"id":1,"symbol":"BTC-USD","qty":"-0.01","entry_price":"65000"}}',
         b'{"seq":3,"channel":"balance","data":{"account_type":"perps","token":"DUSD","free":"100","total":"100"}}',
         b'{"seq":4,"channel":"trade","data":{"id":7,"order_id":11545819148,"price":"65000","qty":"0.01"}}'],
        [b'{"seq":1,"channel":"kline","symbol":"BTC-USD","data":{}}', b'[1,2]', b'not json',
         b' { "seq" : 2 , "channel" : "price" , "symbol" : "X" , "data" : { "x" : [ 1 , { "y" : null } ] } } ',
         b'{"seq":"3","channel":"price","data":{"symbol":"X"}}', b'{"seq":-1,"channel":"depth_book"}',
         b'{"seq":4,"channel":"depth_book","symbol":"X","data":{"asks":[["1","\\u0031"]],"bids":[[1,2]]}}'],
        # Pushes that say two things, books that are not books, seqs beyond i64 (README,
        # "What the venue sends"): errors naming their subscription, or `unrecognized`.
        [b'{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"symbol":"ETH-USD","mark_price":"3000"}}',
         b'{"seq":2,"channel":"price","symbol":"BTC-USD","symbol":"ETH-USD","data":{}}',
         b'{"seq":3,"seq":900,"channel":"price","symbol":"BTC-USD","data":{}}',
         b'{"seq":4,"channel":"price","data":{"symbol":"BTC-USD","symbol":"ETH-USD"}}',
         b'{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["1","NaN"],["2",null],["3"]],"bids":[["9","-1"]]}}',
         b'{"seq":6,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[{"price":"1","qty":"2"},{"px":0.5,"sz":1}],"bids":null}}',
         b'{"seq":7,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["2","1"]],"asks":[["1","1"]],"bids":[]}}',
         b'{"seq":8,"channel":"depth_book","symbol":"BTC-USD","data":{"Asks":[]}}',
         b'{"seq":18446744073709551615,"channel":"trade","data":{"id":1}}',
         b'{"seq":1.5,"channel":"price","symbol":7,"data":{}}'],
    ]],
    # Order-stream replies (venue-api.md §2.3): a flags byte (requests less one, bit 2: a login
    # awaited), then frames joined by 0xFF; @1…@4 and @L stand for the requests' and the
    # login's request_id, a frame b"\x00" ends the connection, b"\x01" marks it served.
    "order_replies": [bytes([flags]) + b"\xff".join(frames) for flags, frames in [
        (5, [b'{"code":0,"message":"success","request_id":"@L"}', b"\x01",
             b'{"code":0,"message":"accepted","request_id":"@1"}', b'{"code":0,"message":"success","request_id":"@1"}',
             b'{"status":"accepted","request_id":"@2"}', b'{"code":400,"message":"alo order rejected","request_id":"@2"}',
             b'{"code":0,"message":"success","request_id":"@2"}']),
        (7, [b'{"code":200,"message":"accepted","request_id":"@L"}', b"\x01",
             b'{"code":0,"message":"accepted","request_id":"@3"}', b"\x00",
             b'{"code":0,"message":"success","request_id":"@L"}', b'{"code":503,"message":"busy","request_id":"@3"}',
             b'{"code":401,"message":"invalid token"}']),
        (3, [b'{"code":0,"message":"success","request_id":"@4","data":{"order_id":11545819148}}',
             b'{"code":"0","message":"success","request_id":"@3"}', b'{"code":1e-400,"request_id":"@2"}',
             b'{"code":0,"message":"success"}', b'[1]', b'not json', b'{"request_id":5}',
             b'{"code":0,"message":"received","request_id":"@1"}', b'{"code":400,"message":"rejected","request_id":"@1"}']),
        (0, [b'{"code":0,"message":"accepted","request_id":"00000000-0000-0000-0000-000000000000"}', b"\x00", b"\x00"]),
        # Found by CI (stop 29): serde_json reads 1e-199 one unit in the last place off, and the
        # frame written back from its Value was not the venue's.
        (3, [b'{"code":1e-199,"request_id":"@2"}',
             b'{"request_id":"@1","code":0,"message":"success","data":{"price":65000.10,"z":1,"a":2}}']),
    ]],
    # A hostile venue on the wire: a flags byte (bits 0-1: market, market with a session, order
    # stream; 4: raw bytes after the upgrade; 8: the upgrade's answer before 0xFE), then text
    # frames joined by 0xFF; @T is the token, @R the login's request_id, @O the order's.
    "stream_wire": [
        b"\x00" + b"\xff".join([
            b'{"seq":1,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["65010","1"]],"bids":[["64990","2"]]}}',
            b'{"seq":3,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"65000"}}', b"not json", b"\xc3\x28"]),
        b"\x01" + b"\xff".join([
            b'{"seq":2,"channel":"order","data":{"id":1,"status":"open","token":"@T"}}',
            b'{"seq":3,"channel":"balance","data":{"free":"1","echo":"\\u0066uzz-wire-token-7Qx2Lp"}}']),
        b"\x02" + b"\xff".join([
            b'{"code":0,"message":"accepted","request_id":"@O"}', b'{"code":400,"message":"alo order rejected @T","request_id":"@O"}',
            b'{"code":0,"message":"success","request_id":"@R"}', b'{"code":401,"message":"invalid token"}']),
        # Raw: a ping, a fragmented text message, a binary frame, then a close in mid-message.
        b"\x04" + b"\x89\x02hi" + b"\x01\x03{\"a" + b"\x80\x02\":" + b"\x82\x01\x00" + b"\x01\x01{" + b"\x88\x02\x03\xe8",
        # Raw: a frame declaring more than the frame cap.
        b"\x06" + b"\x81\x7f" + (1 << 40).to_bytes(8, "big") + b"{}",
        # The upgrade answered in other ways (market streams with a session).
        b"\x09HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: @ACCEPT\r\n\r\n\xfe"
        b'{"seq":1,"channel":"price","symbol":"BTC-USD","data":{}}',
        b"\x09HTTP/1.1 401 Unauthorized\r\nContent-Length: 26\r\n\r\n{\"message\":\"bad @T\"}\xfe",
        b"\x09HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: wrong\r\n\r\n\xfe",
    ],
}

for target, items in seeds.items():
    folder = HERE / target
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for i, item in enumerate(items):
        (folder / f"seed-{i:02}").write_bytes(item if isinstance(item, bytes) else item.encode())
    print(f"{target}: {len(items)} seeds")
