"""TLS checks: https:// and wss:// against a venue with a private CA (trustme) handed over by
the client option `ca_bundle_path` (README "Client options"); wrong host name, expired
certificate, untrusted CA, no CA option must all fail clearly, with
may_have_reached_venue false for an order. Run: python check_tls.py [NAME...]"""
import datetime
import os
import sys
import tempfile

import trustme

from common import client, session, error_of, describe, collect, brief, perps, registry, run_checks
from venue import Venue, stream_auth_then

TMP = tempfile.mkdtemp(prefix="interop-tls-")
CA = trustme.CA()
OTHER_CA = trustme.CA()
CA_PEM = os.path.join(TMP, "ca.pem")
OTHER_CA_PEM = os.path.join(TMP, "other-ca.pem")
CA.cert_pem.write_to_path(CA_PEM)
OTHER_CA.cert_pem.write_to_path(OTHER_CA_PEM)
ORDER = {"symbol": "BTC-USD", "side": "buy", "order_type": "limit", "qty": "0.001",
         "price": "65000", "time_in_force": "gtc", "reduce_only": False}
CHECKS, check = registry()


def tls_venue(ca, *names, **kw):
    leaf = ca.issue_cert(*names, **kw)
    cert = os.path.join(TMP, f"leaf-{id(leaf)}.pem")
    key = os.path.join(TMP, f"key-{id(leaf)}.pem")
    leaf.private_key_and_cert_chain_pem.write_to_path(cert)
    leaf.private_key_pem.write_to_path(key)
    v = Venue(tls=(cert, key))
    v.stream = lambda ws, ven: stream_auth_then(ws, ven, [
        {"seq": 1, "channel": "price", "symbol": "BTC-USD", "data": {"symbol": "BTC-USD", "mark_price": "1"}}])
    return v


@check("tls_good_rest_and_both_wss")
def _():
    v = tls_venue(CA, "127.0.0.1", "localhost")
    with client(v, ca_bundle_path=CA_PEM) as c:
        s = session()
        e1, r1 = error_of(c.query_open_orders, s, {"symbol": "BTC-USD"})
        e2, r2 = error_of(c.new_order, s, ORDER)
        e3, st = error_of(c.open_stream, s, [{"channel": "price", "symbol": "BTC-USD"}])
        evs = collect(st, 1.5, lambda e: e.get("channel") == "price") if st else []
        e4, os_ = error_of(c.open_order_stream, s)
        evs2 = []
        if os_:
            os_.new_order(ORDER)
            evs2 = collect(os_, 1.5, lambda e: e.get("final"))
            os_.close()
        if st:
            st.close()
    good = not any([e1, e2, e3, e4]) and any(e.get("channel") == "price" for e in evs) and any(e.get("final") for e in evs2)
    return good, f"rest={describe(e1)}/{describe(e2)} stream={describe(e3)} {[brief(e) for e in evs][-1:]} order_stream={describe(e4)} {[brief(e) for e in evs2][-1:]}"


def refused(v, opts, what):
    """REST order, REST read and the stream open must each fail, none silently."""
    out = []
    good = True
    with client(v, **opts) as c:
        s = session()
        e, r = error_of(c.new_order, s, ORDER)
        good &= e is not None and e.code in (perps.Code.TRANSPORT,) and e.may_have_reached_venue is False
        out.append("new_order: " + describe(e))
        e, r = error_of(c.query_balance, s)
        good &= e is not None
        out.append("query_balance: " + describe(e))
        e, st = error_of(c.open_stream, None, [{"channel": "price", "symbol": "BTC-USD"}])
        good &= e is not None
        if st:
            st.close()
        out.append("open_stream: " + describe(e))
        e, st = error_of(c.open_order_stream, s)
        good &= e is not None
        if st:
            st.close()
        out.append("open_order_stream: " + describe(e))
    good &= not v.requests("/api/new_order") and not v.requests("/api/query_balance")
    return good, f"[{what}] " + " | ".join(out) + f" | requests reaching the venue: {len(v.log)}"


@check("tls_no_ca_option_self_signed")
def _():
    return refused(tls_venue(CA, "127.0.0.1"), {}, "no ca_bundle_path")


@check("tls_untrusted_ca")
def _():
    return refused(tls_venue(CA, "127.0.0.1"), {"ca_bundle_path": OTHER_CA_PEM}, "other CA")


@check("tls_wrong_host_name")
def _():
    return refused(tls_venue(CA, "venue.example"), {"ca_bundle_path": CA_PEM}, "cert for venue.example")


@check("tls_localhost_name_only_vs_ip")
def _():
    return refused(tls_venue(CA, "localhost"), {"ca_bundle_path": CA_PEM}, "cert for localhost, URL 127.0.0.1")


@check("tls_expired")
def _():
    past = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    return refused(tls_venue(CA, "127.0.0.1", not_before=past - datetime.timedelta(days=30), not_after=past),
                   {"ca_bundle_path": CA_PEM}, "expired 2024-01-01")


@check("tls_not_yet_valid")
def _():
    fut = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
    return refused(tls_venue(CA, "127.0.0.1", not_before=fut, not_after=fut + datetime.timedelta(days=30)),
                   {"ca_bundle_path": CA_PEM}, "valid from 2030")


@check("tls_ca_bundle_missing_file")
def _():
    v = tls_venue(CA, "127.0.0.1")
    e, c = error_of(perps.Client, v.base_url, v.perps_url, {"ca_bundle_path": "/nonexistent/ca.pem"})
    return e is not None and e.code == perps.Code.INVALID_ARGUMENT, describe(e)


@check("tls_ca_bundle_not_pem")
def _():
    bad = os.path.join(TMP, "bad.pem")
    open(bad, "w").write("not a certificate\n")
    v = tls_venue(CA, "127.0.0.1")
    e, c = error_of(perps.Client, v.base_url, v.perps_url, {"ca_bundle_path": bad})
    if c is not None:
        c.close()
    return e is not None, describe(e)


@check("tls_plain_http_to_tls_port")  # http:// URL pointed at the TLS port: clear failure
def _():
    v = tls_venue(CA, "127.0.0.1")
    v.perps_url = v.perps_url.replace("https://", "http://")
    v.base_url = v.base_url.replace("https://", "http://")
    with client(v) as c:
        e, r = error_of(c.query_balance, session())
    return e is not None, describe(e)


if __name__ == "__main__":
    sys.exit(run_checks(CHECKS, sys.argv[1:]))
