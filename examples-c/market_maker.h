/*
 * examples-c/market_maker.h: the state of market_maker.c and how each stream event changes
 * it. Parsing and book-keeping only: every library call is in market_maker.c (streams,
 * orders) and market_maker_rest.h (REST). A handler that finds the streams can no longer be
 * trusted sets `resync_reason` (or `reconcile_reason`); the loop then turns to REST.
 */
#ifndef PERPS_EXAMPLES_MARKET_MAKER_H
#define PERPS_EXAMPLES_MARKET_MAKER_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json_scan.h"
#include "ticks.h"

/* The symbol (MM_SYMBOL) and its rules, read from query_symbol_info at start
 * (read_symbol_rules): never assumed, since a venue changes them (BTC-USD's lot went from
 * 0.001 to 0.0001 between two versions of its documents). Prices are integers of ticks of
 * 10^-price_decimals, quantities integers of lots of 10^-qty_decimals (ticks.h). */
static char symbol[32] = "BTC-USD", base_asset[16] = "";
static int price_decimals = -1, qty_decimals = -1;
static long long quote_qty = 0;    /* each quote's size, in lots */
static long long max_position = 0; /* the largest absolute position quoting may lead to, in lots */

/* The engine's own orders carry this cl_ord_id prefix (the client option cl_ord_id_prefix):
 * an account may be shared with other engines or a person, so only orders with it are ever
 * cancelled as strays. Two engines on one account need two prefixes. */
static const char *const CL_ORD_ID_PREFIX = "mm-";

static int is_own_order(const char *cl_ord_id) {
    return strncmp(cl_ord_id, CL_ORD_ID_PREFIX, strlen(CL_ORD_ID_PREFIX)) == 0;
}

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* One side's quote. FREE: none; PLACING: order:new sent, outcome awaited; RESTING: the
 * venue holds it; CANCELLING: order:cancel sent, or refused and the account stream is
 * awaited to say how the order ended; UNKNOWN: its fate is unknown (an outcome with
 * "outcome_unknown":true, a repeated reply with "contradicts":true, a request left
 * "unanswered" by a lost connection or reported by a "request_timeout" event, a write that
 * may have partly left): the order is looked
 * up by its cl_ord_id over REST before this side is quoted again — never sent again
 * blindly. */
enum quote_state { FREE, PLACING, RESTING, CANCELLING, UNKNOWN };
struct quote {
    const char *side, *name; /* "buy" / "bid", "sell" / "ask" */
    enum quote_state state;
    char cl_ord_id[64];
    char price[32];
    long long mid;           /* the book mid it was priced from, in ticks */
    long long wait_for_book; /* after a rejection: quote again only from a book newer than this */
    int misses;              /* reconciles in a row that did not list it */
    long long unknown_ms;    /* UNKNOWN: since when */
};
static struct quote bid = {"buy", "bid", FREE, "", "", 0, 0, 0, 0}, ask = {"sell", "ask", FREE, "", "", 0, 0, 0, 0};
static struct quote *const quotes[2] = {&bid, &ask};

/* A request written on the order stream whose final reply has not come yet. */
struct request {
    char id[64]; /* the venue request_id the replies echo; "" for a free slot */
    char cl_ord_id[64];
    char price[32];
    const char *method; /* "order:new" or "order:cancel" */
    struct quote *q;
    int acked;          /* its "accepted" ack (final false) arrived */
};
static struct request requests[16];

static int market_up = 0, orders_up = 0; /* connected, and not lost since */
static int ended = 0, failed = 0;        /* a stream ended: leave the loop (failed: exit 1) */
static int fills = 0;
static long long best_bid = -1, best_ask = -1, book_at_ms = 0, books_seen = 0;
static char mark[40] = "";
static char streamed_position[40] = "0"; /* what the position channel last said */
static long long fills_since_position = 0; /* the account's fills (trade channel) since then, in lots, + a buy */
static const char *resync_reason = NULL;    /* cancel our orders by REST and start afresh */
static const char *reconcile_reason = NULL; /* compare with REST now */

static struct quote *quote_by_cl_ord_id(const char *cl_ord_id) {
    for (int i = 0; i < 2; i++) {
        if (quotes[i]->state != FREE && cl_ord_id[0] != '\0' && strcmp(quotes[i]->cl_ord_id, cl_ord_id) == 0) {
            return quotes[i];
        }
    }
    return NULL;
}

static int tracked_count(void) {
    return (bid.state != FREE) + (ask.state != FREE);
}

static void forget(struct quote *q) {
    q->state = FREE;
    q->cl_ord_id[0] = '\0';
    q->misses = 0;
}

static struct request *find_request(const char *id) {
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        if (requests[i].id[0] != '\0' && strcmp(requests[i].id, id) == 0) {
            return &requests[i];
        }
    }
    return NULL;
}

static struct request *free_request(void) {
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        if (requests[i].id[0] == '\0') {
            return &requests[i];
        }
    }
    return NULL;
}

static int pending_count(void) {
    int n = 0;
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        n += requests[i].id[0] != '\0';
    }
    return n;
}

/* Is a request about this order still waiting for its outcome? */
static int request_pending_for(const char *cl_ord_id) {
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        if (requests[i].id[0] != '\0' && strcmp(requests[i].cl_ord_id, cl_ord_id) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The order of `q` (cl_ord_id) may or may not be at the venue: look it up before quoting. */
static void fate_unknown(struct quote *q, const char *cl_ord_id, const char *why) {
    printf("  unknown  %s %s (%s): looked up by cl_ord_id; this side is not quoted until its end is known\n", q->name, cl_ord_id, why);
    if (cl_ord_id != q->cl_ord_id) { /* (copying a string onto itself would be undefined) */
        snprintf(q->cl_ord_id, sizeof q->cl_ord_id, "%s", cl_ord_id);
    }
    q->state = UNKNOWN;
    q->unknown_ms = now_ms();
}

static void forget_requests(void) {
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        requests[i].id[0] = '\0';
    }
}

/* Status events: connection changes of either stream. */
static void on_status(const char *stream, const char *e, int *up) {
    char state[32], detail[256] = "", more[64] = "";
    json_get(e, "state", state, sizeof state);
    if (strcmp(state, "connected") == 0 || strcmp(state, "reconnected") == 0) {
        int again = state[0] == 'r';
        *up = 1;
        json_get(e, "connection", more, sizeof more);
        if (json_get(e, "session_id", detail, sizeof detail)) {
            printf("%s: %s (connection %s, session_id %s)%s\n", stream, state, more, detail, again ? ": reconcile by REST, then quote again" : "");
        } else {
            printf("%s: %s (connection %s)%s\n", stream, state, more, again ? ": reconcile by REST, then quote again" : "");
        }
        if (again) {
            resync_reason = "reconnected"; /* what happened while we were away is unknown */
        }
    } else if (strcmp(state, "disconnected") == 0) {
        json_get(e, "reason", detail, sizeof detail);
        printf("%s: disconnected (%s): stop quoting, cancel our quotes by REST\n", stream, detail);
        /* Requests written whose outcome never came: each order's fate is unknown. */
        for (const char *id = json_first(json_member(e, "unanswered")); id != NULL; id = json_next(id)) {
            char request_id[64];
            struct request *r = json_text(id, request_id, sizeof request_id) ? find_request(request_id) : NULL;
            /* Only while its side still tracks that order: a cancel of an order the account
             * stream already reported ended must not take the side from its newer order. */
            if (r != NULL && quote_by_cl_ord_id(r->cl_ord_id) == r->q) {
                fate_unknown(r->q, r->cl_ord_id, "unanswered when the connection was lost");
            }
            if (r != NULL) {
                r->id[0] = '\0';
            }
        }
        if (*up) { /* blind or unable to cancel over the stream: pull the quotes (even for a planned rotation) */
            resync_reason = "disconnected";
        }
        *up = 0;
    } else if (strcmp(state, "reconnecting") == 0 || strcmp(state, "reconnect_failed") == 0) {
        *up = 0;
        json_get(e, "attempt", more, sizeof more);
        json_get(e, "message", detail, sizeof detail);
        printf("%s: %s (attempt %s%s%s): not quoting\n", stream, state, more, detail[0] ? ", " : "", detail);
    } else if (strcmp(state, "request_timeout") == 0) {
        /* The library's deadline (client option stream_request_timeout_ms): no outcome came
         * for a request in time, the connection still up. Its fate is unknown; a late outcome
         * would still come matched, but we trust REST instead. */
        char request_id[64];
        json_get(e, "timeout_ms", more, sizeof more);
        struct request *r = json_get(e, "request_id", request_id, sizeof request_id) ? find_request(request_id) : NULL;
        if (r != NULL) {
            printf("  no outcome for %s %s within %s ms\n", r->method, r->cl_ord_id, more);
            if (quote_by_cl_ord_id(r->cl_ord_id) == r->q) {
                fate_unknown(r->q, r->cl_ord_id, "no outcome in time");
            }
            r->id[0] = '\0';
            resync_reason = "reply overdue";
        }
    } else if (strcmp(state, "gap") == 0 || strcmp(state, "seq_regression") == 0) {
        printf("%s: %s in the venue's seq: an event may be missing, reconcile by REST\n", stream, state);
        reconcile_reason = state[0] == 'g' ? "after a gap" : "after a seq regression";
    } else if (strcmp(state, "overflow") == 0) {
        json_get(e, "dropped", more, sizeof more);
        printf("%s: overflow, %s event(s) dropped: we fell behind, start afresh\n", stream, more);
        resync_reason = "events dropped";
    } else if (strcmp(state, "error") == 0) {
        json_get(e, "message", detail, sizeof detail);
        printf("%s: error event (the connection goes on): %s\n", stream, detail);
    } else if (strcmp(state, "failed") == 0) {
        json_get(e, "code_name", more, sizeof more);
        json_get(e, "message", detail, sizeof detail);
        printf("%s failed: %s: %s\n", stream, more, detail);
        ended = failed = 1;
    } else {
        printf("%s: status %s\n", stream, state);
    }
}

/* depth_book: levels arrive sorted best first, so the first level of each side is the top. */
static void on_book(const char *data) {
    char top_bid[40], top_ask[40];
    if (!json_text(json_first(json_first(json_member(data, "bids"))), top_bid, sizeof top_bid) ||
        !json_text(json_first(json_first(json_member(data, "asks"))), top_ask, sizeof top_ask)) {
        return; /* a side is empty: no mid to quote around (the book goes stale, quoting stops) */
    }
    long long b, a;
    static int said; /* the book below was refused: said once, not every push */
    if (!ticks_exact(top_bid, price_decimals, &b) || !ticks_exact(top_ask, price_decimals, &a) || b <= 0) {
        /* Not a plain positive decimal on our tick ("6.5e4", "null", "", or a finer tick than
         * the rules read at start: they changed): no price to quote around (the book goes
         * stale, the quotes are pulled). */
        if (!said) {
            printf("book %s / %s: not prices on the tick read at start: no book to quote around\n", top_bid, top_ask);
        }
        said = 1;
        return;
    }
    said = 0;
    if (b >= a) {
        return; /* crossed: not a price to quote around */
    }
    if (b != best_bid || a != best_ask) {
        printf("book %s / %s\n", top_bid, top_ask);
    }
    best_bid = b;
    best_ask = a;
    book_at_ms = now_ms();
    books_seen++;
}

static void on_price(const char *data) {
    char m[40];
    if (json_get(data, "mark_price", m, sizeof m) && strcmp(m, mark) != 0) {
        printf("mark %s\n", m);
        snprintf(mark, sizeof mark, "%s", m);
    }
}

static void print_live(void) {
    if (bid.state == RESTING && ask.state == RESTING) {
        printf("  live     bid %s  ask %s\n", bid.price, ask.price);
    }
}

/* order (account channel): the venue's order object, on every change of one of our orders. */
static void on_order(const char *data) {
    char cl_ord_id[64], status[24], side[8], filled[32], avg[32];
    json_get(data, "cl_ord_id", cl_ord_id, sizeof cl_ord_id);
    json_get(data, "status", status, sizeof status);
    struct quote *q = quote_by_cl_ord_id(cl_ord_id);
    if (strcmp(status, "filled") == 0) {
        json_get(data, "side", side, sizeof side);
        json_get(data, "fill_qty", filled, sizeof filled);
        json_get(data, "fill_avg_price", avg, sizeof avg);
        printf("  FILLED   %s %s %s @ %s (%s)\n", side, filled, base_asset, avg, cl_ord_id);
        fills++;
        if (q != NULL) {
            forget(q);
        }
    } else if (q != NULL && (strcmp(status, "canceled") == 0 || strcmp(status, "cancelled") == 0 ||
                             strcmp(status, "rejected") == 0 || strcmp(status, "expired") == 0)) {
        if (!request_pending_for(cl_ord_id)) { /* not our doing, or its reply went missing */
            printf("  %s %s %s (account stream)\n", status, q->name, cl_ord_id);
        }
        forget(q);
        if (status[0] == 'r') {
            q->wait_for_book = books_seen; /* priced from a stale book: wait for a newer one */
        }
    }
}

static void on_trade(const char *data) {
    char side[8], qty[32], price[32], fee[40], asset[16], order_id[32], sym[32];
    json_get(data, "side", side, sizeof side);
    json_get(data, "qty", qty, sizeof qty);
    json_get(data, "price", price, sizeof price);
    json_get(data, "fee_qty", fee, sizeof fee);
    json_get(data, "fee_asset", asset, sizeof asset);
    json_get(data, "order_id", order_id, sizeof order_id);
    printf("  trade    %s %s @ %s, fee %s %s (order %s)\n", side, qty, price, fee, asset, order_id);
    /* The position limit counts this fill until the position channel gives the new position
     * (a trade of another symbol of the account changes nothing here). */
    if (!json_get(data, "symbol", sym, sizeof sym) || strcmp(sym, symbol) == 0) {
        long long lots = to_ticks(qty, qty_decimals);
        fills_since_position += strcmp(side, "buy") == 0 ? lots : -lots;
    }
}

static void on_position(const char *data) {
    char sym[32], qty[40], entry[40];
    if (json_get(data, "symbol", sym, sizeof sym) && strcmp(sym, symbol) == 0 && json_get(data, "qty", qty, sizeof qty)) {
        json_get(data, "entry_price", entry, sizeof entry);
        printf("  position %s %s, entry %s\n", qty, base_asset, entry);
        snprintf(streamed_position, sizeof streamed_position, "%s", qty);
        fills_since_position = 0; /* they are in this position now */
    }
}

/* May quote `q` be placed (`placing`), or keep resting, under the position limit? Its fill
 * must not take the absolute position beyond max_position. The position is the position
 * channel's. A new quote also counts the fills the trade channel reported since (the venue
 * pushes a fill's trade before its position; were a venue to push the position first, such
 * a fill would count twice until the next position event, which only errs on the safe side).
 * A resting quote does not: those fills are, as a rule, its own (its order event, on its way,
 * ends it) or the other side's (which cannot take this side beyond the limit). */
static int within_limit(const struct quote *q, int placing) {
    long long said = to_ticks(streamed_position, qty_decimals), now = said + (placing ? fills_since_position : 0);
    if (q == &bid) {
        return (said > now ? said : now) + quote_qty <= max_position;
    }
    return (said < now ? said : now) - quote_qty >= -max_position;
}

/* order_response: the "accepted" ack (final false), then the outcome (final true). */
static void on_reply(const char *e) {
    char id[64], code[16], message[256], is_final[8], matched[8], flag[8];
    json_get(e, "request_id", id, sizeof id);
    if (json_get(e, "repeat", flag, sizeof flag) && strcmp(flag, "true") == 0) {
        if (json_get(e, "contradicts", flag, sizeof flag) && strcmp(flag, "true") == 0) {
            /* The venue said two things of one request: neither can be trusted. */
            char cl_ord_id[64] = "";
            json_get(e, "cl_ord_id", cl_ord_id, sizeof cl_ord_id);
            struct quote *q = quote_by_cl_ord_id(cl_ord_id);
            printf("  reply    repeated for request %s, contradicting the first\n", id);
            if (q != NULL) {
                fate_unknown(q, cl_ord_id, "the venue contradicted itself");
            } else {
                resync_reason = "the venue contradicted itself"; /* an order we no longer follow */
            }
            return;
        }
        printf("  reply    repeated for request %s: not an outcome, ignored\n", id); /* its outcome came already */
        return;
    }
    json_get(e, "code", code, sizeof code);
    json_get(e, "message", message, sizeof message);
    json_get(e, "final", is_final, sizeof is_final);
    json_get(e, "matched", matched, sizeof matched);
    struct request *r = find_request(id);
    if (r == NULL) { /* a REST order's result (x-session-id), or a request forgotten at a resync */
        if (strcmp(is_final, "true") == 0) {
            printf("  reply    to %s request %s: %s\n", strcmp(matched, "true") == 0 ? "a forgotten" : "no", id, message);
        }
        return;
    }
    if (strcmp(is_final, "true") != 0) {
        r->acked = 1;
        return;
    }
    struct quote *q = r->q;
    /* The library's reading of the code (0 or 200, a number or digits): no code is re-read here. */
    int ok = json_get(e, "success", flag, sizeof flag) && strcmp(flag, "true") == 0;
    int ours = q->state != FREE && strcmp(q->cl_ord_id, r->cl_ord_id) == 0;
    const char *then = r->acked ? "accepted, then" : "(no ack seen), then";
    if (json_get(e, "outcome_unknown", flag, sizeof flag) && strcmp(flag, "true") == 0) {
        /* e.g. code 503 or 408 from behind the venue's gateway: it may have been acted on. */
        printf("  %s %s %s: %s \"%s\" (code %s): outcome unknown\n", r->method, q->name, r->cl_ord_id, then, message, code);
        if (ours) {
            fate_unknown(q, r->cl_ord_id, "outcome unknown");
        }
        r->id[0] = '\0';
        return;
    }
    if (strcmp(r->method, "order:new") == 0) {
        if (ok) {
            printf("  placed   %s %s %s: %s %s\n", q->name, r->price, r->cl_ord_id, then, message);
        } else {
            printf("  rejected %s %s %s: %s \"%s\" (code %s): quote again from a newer book\n", q->name, r->price,
                   r->cl_ord_id, then, message, code);
        }
        if (ours && ok && q->state == PLACING) {
            q->state = RESTING;
            r->id[0] = '\0';
            print_live();
            return;
        }
        if (ours && !ok) {
            forget(q);
            q->wait_for_book = books_seen;
        }
    } else if (ok) {
        printf("  canceled %s %s: %s %s\n", q->name, r->cl_ord_id, then, message);
        if (ours) {
            forget(q);
        }
    } else { /* e.g. "order not found": it filled first, or is not listed yet; or a 429, a 400 */
        printf("  cancel   %s %s refused: %s \"%s\" (code %s)\n", q->name, r->cl_ord_id, then, message, code);
        if (ours) { /* it may still rest, priced from an old book: look it up (and cancel it by REST) */
            fate_unknown(q, r->cl_ord_id, "its cancel was refused");
        }
    }
    r->id[0] = '\0';
}

static void on_market_event(const char *e) {
    char channel[32];
    json_get(e, "channel", channel, sizeof channel);
    const char *data = json_member(e, "data");
    if (strcmp(channel, "depth_book") == 0) {
        on_book(data);
    } else if (strcmp(channel, "price") == 0) {
        on_price(data);
    } else if (strcmp(channel, "order") == 0) {
        on_order(data);
    } else if (strcmp(channel, "trade") == 0) {
        on_trade(data);
    } else if (strcmp(channel, "position") == 0) {
        on_position(data);
    } else if (strcmp(channel, "status") == 0) {
        on_status("market stream", e, &market_up);
    } else { /* "unrecognized" frames are passed through whole by the library */
        printf("market stream: %s event: %.200s\n", channel, e);
    }
}

static void on_order_stream_event(const char *e) {
    char channel[32];
    json_get(e, "channel", channel, sizeof channel);
    if (strcmp(channel, "order_response") == 0) {
        on_reply(e);
    } else if (strcmp(channel, "status") == 0) {
        on_status("order stream", e, &orders_up);
    } else {
        printf("order stream: %s event: %.200s\n", channel, e);
    }
}

#endif /* PERPS_EXAMPLES_MARKET_MAKER_H */
