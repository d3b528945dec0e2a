"""The sign-in side of the interop venue, written from /work/shared/spec only
(seed-auth-and-signing.md "Endpoints" 1-3 and "Authentication", venue-facts.md "Sign-in
challenge" and "Wallet signatures", venue-api.md §3.3 clock and §3.4 token), with other
people's libraries: PyJWT + cryptography (the ES256 challenge and its JWK set), eth-account
(EIP-191 personal_sign recovery for bsc), PyNaCl + base58 (Ed25519 and Solana addresses).

    v = SigninVenue()                       # a venue.Venue with the three /v1/offchain calls
    v.shape = lambda claims, header, venue: ...  # bend the challenges (tests of refusals)
    v.login_answer = lambda result: result  # bend the login answer
    v.logins                                # what login received, verified: LoginSeen rows

A successful login registers the session's Ed25519 key (its requestId) for the token it
issues, so body-signed requests are verified with that key (venue.Venue.keys).
"""
from __future__ import annotations

import base64
import datetime
import json
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

import base58
import jwt
import nacl.exceptions
import nacl.signing
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from eth_account import Account
from eth_account.messages import encode_defunct
from jwt.algorithms import ECAlgorithm

from venue import Venue, ok

DOMAIN = "standx.com"            # venue-facts.md example payload
URI = "https://standx.com"
STATEMENT = "Sign in to the perpetuals venue."  # the real text is not shown; any statement
CHAIN_IDS = {"bsc": 56, "solana": 501}  # 56: venue-facts.md; Solana's is not shown (501 is ours)
CHALLENGE_LIFETIME = 180                # venue-facts.md: exp - iat = 180 s
DEFAULT_TOKEN_LIFETIME = 604800         # seed "Limits": expiresSeconds default
AUTH = "/auth/v1/offchain"              # venue.Venue serves base_url at /auth


def iso(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def siwe_message(chain: str, claims: Dict[str, Any], request_id_line: bool = True,
                 extra: Optional[List[str]] = None) -> str:
    """The EIP-4361 text venue-facts.md names ("… wants you to sign in with your Ethereum
    account:\\n0x…\\n\\n…"); Solana's wording (Sign-In With Solana) says "Solana account"."""
    account = "Ethereum" if chain == "bsc" else "Solana"
    lines = [f"{claims['domain']} wants you to sign in with your {account} account:", claims["address"], "",
             claims["statement"], "", f"URI: {claims['uri']}", f"Version: {claims['version']}",
             f"Chain ID: {claims['chainId']}", f"Nonce: {claims['nonce']}", f"Issued At: {claims['issuedAt']}"]
    lines += extra or []  # EIP-4361's optional Expiration Time / Not Before, in its order
    if request_id_line:
        lines.append(f"Request ID: {claims['requestId']}")
    return "\n".join(lines)


class Issuer:
    """The venue's ES256 signing keys and its JWK set (venue-facts.md: kty EC, crv P-256)."""

    def __init__(self):
        self.keys: Dict[str, ec.EllipticCurvePrivateKey] = {}
        self.current = self.rotate()

    def rotate(self) -> str:
        kid = "k-" + secrets.token_hex(4)
        self.keys[kid] = ec.generate_private_key(ec.SECP256R1())
        self.current = kid
        return kid

    def jwks(self, only: Optional[List[str]] = None, use: bool = True) -> Dict[str, Any]:
        out = []
        for kid, key in self.keys.items():
            if only is not None and kid not in only:
                continue
            jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
            jwk.update(kid=kid, alg="ES256")
            if use:
                jwk["use"] = "sig"
            out.append(jwk)
        return {"keys": out}

    def sign(self, claims: Dict[str, Any], header: Dict[str, Any], kid: Optional[str] = None) -> str:
        # PyJWT writes ES256 as raw r||s (RFC 7518 §3.4), as the venue does.
        return jwt.encode(claims, self.keys[kid or self.current], algorithm="ES256", headers=header)

    def sign_text(self, header_text: str, payload_text: str, der: bool = False) -> str:
        """A compact JWS over these exact JSON texts (odd spacing, escapes, key order kept):
        RFC 7515 §5.1 signs the base64url of the bytes as written. `der` writes the
        signature in ASN.1 DER, which RFC 7518 §3.4 does not allow (a venue bug to refuse)."""
        b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
        signing_input = b64(header_text.encode()) + "." + b64(payload_text.encode())
        sig = self.keys[self.current].sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        if not der:
            r, s_ = decode_dss_signature(sig)
            sig = r.to_bytes(32, "big") + s_.to_bytes(32, "big")
        return signing_input + "." + b64(sig)

    def verify(self, token: str) -> Dict[str, Any]:
        kid = jwt.get_unverified_header(token).get("kid")
        for k, key in self.keys.items():
            if kid is None or kid == k:
                try:
                    # The venue's own clock judges exp (SigninVenue.now), not PyJWT's real one.
                    return jwt.decode(token, key.public_key(), algorithms=["ES256"],
                                      options={"verify_exp": False, "verify_iat": False, "verify_nbf": False})
                except jwt.InvalidTokenError:
                    continue
        raise jwt.InvalidSignatureError("no venue key verifies signedData")


@dataclass
class LoginSeen:
    chain: str
    body: Dict[str, Any]
    recovered: Optional[str]   # the address the venue recovered from the signature
    error: Optional[str]       # why the venue refused it, or None
    token: Optional[str] = None


def recover_bsc(message: str, signature: str) -> str:
    """EIP-191 personal_sign recovery (venue-facts.md "Wallet signatures": 0x + 130 hex)."""
    if not (signature.startswith("0x") and len(signature) == 132):
        raise ValueError("bsc signature is not 0x + 130 hex")
    return Account.recover_message(encode_defunct(text=message), signature=bytes.fromhex(signature[2:]))


def recover_solana(payload: Dict[str, Any], signature: str) -> str:
    """Seed "Authentication" step 4: base64 of {"input": payload object, "output": {...}}."""
    doc = json.loads(base64.b64decode(signature, validate=True))
    if doc["input"] != payload:
        raise ValueError("input is not the decoded sign-in payload object")
    out = doc["output"]
    signed, sig, pub = bytes(out["signedMessage"]), bytes(out["signature"]), bytes(out["account"]["publicKey"])
    if signed != payload["message"].encode():
        raise ValueError("signedMessage is not the message's UTF-8 bytes")
    nacl.signing.VerifyKey(pub).verify(signed, sig)
    return base58.b58encode(pub).decode()


class SigninVenue(Venue):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.issuer = Issuer()
        self.keys.clear()                 # only tokens issued by login are accepted
        self.shape: Optional[Callable[[Dict[str, Any], Dict[str, Any], "SigninVenue"], Any]] = None
        self.login_answer: Callable[[Dict[str, Any]], Any] = lambda result: result
        self.prepare_answer: Optional[Any] = None
        self.certs_answer: Optional[Callable[[], Any]] = None
        self.clock_offset = 0.0           # the venue's clock minus the real one, seconds
        self.skew_window_ms: Optional[int] = None  # not published (venue-api §3.3); tests choose
        self.max_token_lifetime: Optional[int] = None  # not published (seed "Limits"); tests choose
        self.logins: List[LoginSeen] = []
        self.issued: List[str] = []       # every signedData handed out, as sent
        self.rest[AUTH + "/prepare-signin"] = self._prepare
        self.rest[AUTH + "/certs"] = self._certs
        self.rest[AUTH + "/login"] = self._login
        self.rest["/api/kline/time"] = lambda r: ok(str(int(self.now())))
        signed = self.rest["/api/new_order"]
        self.rest["/api/new_order"] = lambda r: self._check_clock(r) or signed(r)

    def now(self) -> float:
        return time.time() + self.clock_offset

    # -- 1. prepare-signin ---------------------------------------------------------------
    def claims(self, chain: str, address: str, request_id: str) -> Dict[str, Any]:
        now = int(self.now())
        c = {"domain": DOMAIN, "uri": URI, "statement": STATEMENT, "version": "1",
             "chainId": CHAIN_IDS[chain], "nonce": secrets.token_hex(8), "address": address,
             "requestId": request_id, "issuedAt": iso(now), "iat": now, "exp": now + CHALLENGE_LIFETIME}
        c["message"] = siwe_message(chain, c)
        return c

    def _prepare(self, req):
        if self.prepare_answer is not None:
            return ok(self.prepare_answer)
        chain = req.query.get("chain")
        body = json.loads(req.body)
        if chain not in CHAIN_IDS or not body.get("address") or not body.get("requestId"):
            return ok({"success": False, "message": "bad request"})
        claims = self.claims(chain, body["address"], body["requestId"])
        header = {"kid": self.issuer.current}
        token = None
        if self.shape is not None:  # a test bends the claims/header, or returns the JWT itself
            token = self.shape(claims, header, self)
        if token is None:
            token = self.issuer.sign(claims, header)
        self.issued.append(token)
        return ok({"success": True, "signedData": token})

    # -- 2. certs ------------------------------------------------------------------------
    def _certs(self, req):
        if self.certs_answer is not None:
            return ok(self.certs_answer())
        return ok(self.issuer.jwks())

    # -- 3. login ------------------------------------------------------------------------
    def _login(self, req):
        chain = req.query.get("chain")
        body = json.loads(req.body)
        seen = LoginSeen(chain, body, None, None)
        self.logins.append(seen)
        try:
            payload = self.issuer.verify(body["signedData"])
            if payload["exp"] < self.now():
                raise ValueError("sign-in data expired")
            if chain == "bsc":
                seen.recovered = recover_bsc(payload["message"], body["signature"])
                same = seen.recovered.lower() == payload["address"].lower()
            elif chain == "solana":
                seen.recovered = recover_solana(payload, body["signature"])
                same = seen.recovered == payload["address"]
            else:
                raise ValueError("unknown chain")
            if not same:
                raise ValueError("signature is not by the claimed address")
            lifetime = body.get("expiresSeconds", DEFAULT_TOKEN_LIFETIME)
            if not isinstance(lifetime, int) or isinstance(lifetime, bool) or lifetime <= 0:
                raise ValueError("expiresSeconds is not a positive integer")
        except (KeyError, ValueError, TypeError, jwt.InvalidTokenError, nacl.exceptions.BadSignatureError) as e:
            seen.error = repr(e)
            return ok({"code": 400, "message": "Invalid signature"}, 400)
        if self.max_token_lifetime is not None:
            lifetime = min(lifetime, self.max_token_lifetime)
        now = int(self.now())
        token = self.issuer.sign({"sub": payload["address"], "chain": chain, "iat": now, "exp": now + lifetime},
                                 {"typ": "JWT"})
        seen.token = token
        key = nacl.signing.VerifyKey(base58.b58decode(payload["requestId"]))
        self.keys[token] = key
        self.expires[token] = now + lifetime
        result = {"token": token, "address": payload["address"], "alias": "interop-alias",
                  "chain": chain, "perpsAlpha": True}
        return ok(self.login_answer(result))

    # -- clock (venue-api §3.3): stale timestamps answer 403 "signature has expired" ------
    def _check_clock(self, req):
        if self.skew_window_ms is None:
            return None
        ts = int(req.headers.get("x-request-timestamp", "0"))
        if abs(ts - self.now() * 1000) > self.skew_window_ms:
            return ok({"code": 403, "message": "signature has expired"}, 403)
        return None


def solana_wallet(seed: bytes = b"\x07" * 32):
    """A Solana wallet: (base58 64-byte secret||public keypair, base58 address, SigningKey)."""
    sk = nacl.signing.SigningKey(seed)
    pub = bytes(sk.verify_key)
    return base58.b58encode(seed + pub).decode(), base58.b58encode(pub).decode(), sk


def request_id_of(seed: bytes) -> str:
    return base58.b58encode(bytes(nacl.signing.SigningKey(seed).verify_key)).decode()


def fresh_uuid() -> str:
    return str(uuid.uuid4())
