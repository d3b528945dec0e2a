// tests/cpp/test_stream.cpp: perps::Stream (include/perps.hpp) against the WebSocket test
// venue (tests/common/ws_server.rs as the ws_test_server program; tests/cpp/run.sh starts
// it and passes its perps_url in PERPS_TEST_WS_URL): events through next(timeout), orders
// on the order stream with their two-frame replies, errors as perps::Error, close() from
// another thread waking a blocked next(), and RAII close on destruction. Given the sandbox
// venue's BASE_URL and PERPS_URL as arguments (run.sh does, with the sandbox it starts), also
// an order over the sandbox's order stream, its two replies, and its account event.
#include "perps.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "check.hpp"

static bool contains(const std::string &text, const char *needle) { return text.find(needle) != std::string::npos; }

using namespace std::chrono_literals;

// The next event containing `needle` within a few seconds ("" when none came).
static std::string next_with(const perps::Stream &stream, const char *needle) {
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < deadline) {
        std::optional<std::string> event = stream.next(200ms);
        if (event && contains(*event, needle)) {
            return *event;
        }
    }
    std::fprintf(stderr, "     no event with %s\n", needle);
    return "";
}

static void test_market(const std::string &url) {
    perps::Stream stream = [&] {
        perps::Client client(url, url);
        return perps::Stream::market(client, R"([{"channel":"price","symbol":"BTC-USD"}])");
    }();  // the client is gone: the stream keeps what it needs
    CHECK(contains(next_with(stream, R"("state":"connected")"), R"("stream":"market")"));
    CHECK(contains(next_with(stream, R"("channel":"price")"), R"("symbol":"BTC-USD")"));
    try {
        stream.new_order("{}");
        CHECK(false);
    } catch (const perps::Error &e) {
        CHECK(e.code() == PERPS_INVALID_STATE);
    }

    std::atomic<bool> woke{false};
    std::atomic<int> code{0};
    std::thread reader([&] {
        try {
            for (;;) stream.next();
        } catch (const perps::Error &e) {
            code = e.code();
            woke = true;
        }
    });
    std::this_thread::sleep_for(200ms);
    auto closed_at = std::chrono::steady_clock::now();
    stream.close();
    reader.join();
    CHECK(woke && code == PERPS_STREAM_CLOSED);
    CHECK(std::chrono::steady_clock::now() - closed_at < 1500ms);
}

static void test_orders(const std::string &url) {
    perps::Client client(url, url);
    perps::Session session = perps::Session::from_api_key("cpp-test-token-1", "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb");
    perps::Stream stream = perps::Stream::orders(client, session);
    CHECK(contains(next_with(stream, R"("state":"connected")"), R"("stream":"order")"));
    std::string sent = stream.new_order(
        R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"alo","reduce_only":false,"cl_ord_id":"cpp-1"})");
    CHECK(contains(sent, R"("cl_ord_id":"cpp-1")") && contains(sent, R"("request_id":")"));
    CHECK(contains(next_with(stream, R"("final":false)"), R"("message":"accepted")"));
    CHECK(contains(next_with(stream, R"("final":true)"), R"("message":"success")"));
    try {
        stream.cancel_order("{}");
        CHECK(false);
    } catch (const perps::Error &e) {
        CHECK(e.code() == PERPS_INVALID_ARGUMENT && contains(e.what(), "names no order"));
    }
    CHECK(contains(stream.cancel_order(R"({"order_id":4294967297})"), R"("order_id":4294967297)"));
    stream.next(0ms);  // a zero timeout never blocks; an exception here fails the test
    perps::Stream moved = std::move(stream);
    CHECK(!stream && moved);
    try {
        stream.next(0ms);  // a moved-from stream holds no handle
        CHECK(false);
    } catch (const perps::Error &e) {
        CHECK(e.code() == PERPS_INVALID_ARGUMENT);
    }
    stream.close();  // on a moved-from stream: nothing, and no throw (close() is noexcept)
    // release() gives the handle up; adopt() takes it back, and it still works.
    perps_stream *raw = moved.release();
    CHECK(!moved && raw != nullptr);
    CHECK(!perps::Stream::adopt(nullptr));
    perps::Stream again = perps::Stream::adopt(raw);
    CHECK(again.get() == raw);
    // Usable: the adopted handle writes on the same live connection (a dead or closed one
    // would throw) and answers with the order it names.
    CHECK(contains(again.cancel_order(R"({"order_id":4294967298})"), R"("order_id":4294967298)"));
}  // RAII: `again` is closed and freed here (valgrind in run.sh finds a double free or leak)

// Against the sandbox (a venue that trades): signed in with a wallet, an order placed over
// the order stream comes back as its ack, its outcome and an `order` event on the account
// stream carrying the cl_ord_id the library made.
static void test_sandbox(const std::string &base_url, const std::string &perps_url) {
    perps::Client client(base_url, perps_url);
    perps::Session session;
    client.signin(session, "bsc", "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", 3600);
    perps::Stream account = perps::Stream::market(client, session, R"([{"channel":"order"}])");
    perps::Stream orders = perps::Stream::orders(client, session);
    CHECK(contains(next_with(account, R"("state":"connected")"), R"("stream":"market")"));
    CHECK(contains(next_with(orders, R"("state":"connected")"), R"("stream":"order")"));
    // A buy far below the mark: it rests.
    std::string sent = orders.new_order(
        R"({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"60000","time_in_force":"gtc","reduce_only":false})");
    std::string::size_type at = sent.find(R"("cl_ord_id":")");
    CHECK(at != std::string::npos);
    std::string cl_ord_id = at == std::string::npos ? "" : sent.substr(at, sent.find('"', at + 13) + 1 - at);
    CHECK(contains(next_with(orders, R"("final":false)"), "accepted"));
    CHECK(contains(next_with(orders, R"("final":true)"), "success"));
    CHECK(!cl_ord_id.empty() && contains(next_with(account, R"("channel":"order")"), cl_ord_id.c_str()));
    orders.close();
    account.close();
}

int main(int argc, char **argv) {
    const char *url = std::getenv("PERPS_TEST_WS_URL");
    if (argc == 3) {
        test_sandbox(argv[1], argv[2]);
    } else {
        CHECK(url != nullptr);
        if (url != nullptr) {
            test_market(url);
            test_orders(url);
        }
    }
    return perps_test_summary();
}
