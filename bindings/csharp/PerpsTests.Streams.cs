// Streams through the C# binding against the sandbox venue's two WebSockets (part of
// PerpsTests): an order placed and cancelled over the order stream, with both reply frames of
// each (the "accepted" ack, final false, then the outcome) and the account stream's order
// events, checked against the venue's REST view; a public depth_book subscription with its
// levels sorted by exact decimal value (the sandbox shuffles them); Next(timeout) returning
// null; Close from another thread waking a blocked Next. A real partial write: orders written
// to an order stream the venue has stalled until one no longer fits the socket, whose error
// names the request by its envelope request_id (PerpsException.StreamRequestId), the id the
// "disconnected" event's "unanswered" list names; errors of requests refused unsent have none.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using Perps;

static partial class PerpsTests
{
    /// <summary>A thread as a failure message names it: id, name, pool and background flags.</summary>
    static string Describe(Thread t)
    {
        return "thread " + t.ManagedThreadId + (t.Name != null ? " '" + t.Name + "'" : "")
            + (t.IsThreadPoolThread ? " (pool)" : "") + (t.IsBackground ? " (background)" : "");
    }

    /// <summary>The first event (parsed) for which accept holds, within 5 s; earlier ones are skipped.</summary>
    static Dictionary<string, object> NextWhere(Stream stream, Func<Dictionary<string, object>, bool> accept)
    {
        var clock = Stopwatch.StartNew();
        var seen = new List<string>();
        while (clock.ElapsedMilliseconds < 5000)
        {
            string text = stream.Next(200);
            if (text == null) continue;
            var e = Obj(Json(text));
            if (accept(e)) return e;
            seen.Add(text);
        }
        throw new Exception("no such event within 5 s; saw " + string.Join(" ", seen));
    }

    static Func<Dictionary<string, object>, bool> IsStatus(string state)
    {
        return e => (string)e["channel"] == "status" && (string)e["state"] == state;
    }

    static Func<Dictionary<string, object>, bool> ResponseTo(string requestId, bool final)
    {
        return e => (string)e["channel"] == "order_response" && (string)e["request_id"] == requestId && (bool)e["final"] == final;
    }

    static Func<Dictionary<string, object>, bool> AccountOrder(string clOrdId, string status)
    {
        return e => (string)e["channel"] == "order" && (string)Obj(e["data"])["cl_ord_id"] == clOrdId
            && (string)Obj(e["data"])["status"] == status;
    }

    static void StreamTests()
    {
        Test("stream codes 15 and 16", () =>
        {
            Equal(15, (int)PerpsCode.StreamClosed);
            Equal(16, (int)PerpsCode.StreamLimit);
        });

        using (var client = new Client(baseUrl, perpsUrl))
        using (var session = new Session())
        {
            client.Signin(session, "bsc", WalletKey, 3600);

            Test("stream: an order over the order stream, both reply frames, its account event", () =>
            {
                string bid = FarBid(client);
                using (var account = client.OpenStream(session, "[{\"channel\":\"order\"}]"))
                using (var orders = client.OpenOrderStream(session))
                {
                    Equal("market", (string)NextWhere(account, IsStatus("connected"))["stream"]);
                    Equal("order", (string)NextWhere(orders, IsStatus("connected"))["stream"]);

                    var sent = Obj(Json(orders.NewOrder(LimitBuy(bid, "0.01", ""))));
                    string requestId = (string)sent["request_id"], cl = (string)sent["cl_ord_id"];
                    Expect(Uuid4.IsMatch(requestId) && cl.Length >= 26, "sent " + string.Join(",", sent));
                    var ack = NextWhere(orders, ResponseTo(requestId, false));
                    Equal("accepted", (string)ack["message"]);
                    Equal(0m, Dec(ack["code"]));
                    var outcome = NextWhere(orders, ResponseTo(requestId, true));
                    Equal("success", (string)outcome["message"]);
                    Equal(cl, (string)outcome["cl_ord_id"]);
                    Expect(Dec(outcome["received_ns"]) >= Dec(ack["received_ns"]), "received_ns in order");

                    var data = Obj(NextWhere(account, AccountOrder(cl, "open"))["data"]);
                    Equal(decimal.Parse(bid), Dec(data["price"]));
                    Equal(0.01m, Dec(data["qty"]));
                    // The venue's REST view agrees: the order it accepted (signature verified) is ours.
                    var rest = Obj(Json(client.QueryOrder(session, "{\"cl_ord_id\":\"" + cl + "\"}")));
                    Equal(Dec(data["id"]), Dec(rest["id"]));
                    Equal("open", (string)rest["status"]);

                    var cancel = Obj(Json(orders.CancelOrder("{\"cl_ord_id\":\"" + cl + "\"}")));
                    string cancelId = (string)cancel["request_id"];
                    Expect(cancelId != requestId && (string)cancel["cl_ord_id"] == cl, "cancel " + cancelId);
                    NextWhere(orders, ResponseTo(cancelId, false));
                    Equal("success", (string)NextWhere(orders, ResponseTo(cancelId, true))["message"]);
                    NextWhere(account, AccountOrder(cl, "canceled"));
                    Equal("canceled", (string)Obj(Json(client.QueryOrder(session, "{\"cl_ord_id\":\"" + cl + "\"}")))["status"]);

                    // Refused before anything is sent.
                    var e = Throws(() => orders.NewOrder(LimitBuy(bid, "0.01", "").Replace("\"buy\"", "\"up\"")));
                    Equal(PerpsCode.InvalidOrder, e.Code);
                    Equal<string>(null, e.StreamRequestId); // no frame was written
                    e = Throws(() => account.NewOrder(LimitBuy(bid, "0.01", ""))); // a market stream takes no orders
                    Equal(PerpsCode.InvalidState, e.Code);
                    var clock = Stopwatch.StartNew();
                    Expect(orders.Next(300) == null, "nothing more on the order stream");
                    Expect(clock.ElapsedMilliseconds >= 290 && clock.ElapsedMilliseconds < 2000, "waited " + clock.ElapsedMilliseconds);
                }
            });

            Test("stream: Close from another thread wakes a blocked Next", () =>
            {
                var orders = client.OpenOrderStream(session); // no orders: nothing more will come
                NextWhere(orders, IsStatus("connected"));
                PerpsException woke = null;
                Exception other = null;
                long wokeAt = 0;
                var clock = Stopwatch.StartNew();
                var reader = new Thread(() =>
                {
                    try { orders.Next(); other = new Exception("Next returned"); }
                    catch (PerpsException e) { woke = e; }
                    catch (Exception e) { other = e; }
                    wokeAt = clock.ElapsedMilliseconds;
                });
                reader.Start();
                Thread.Sleep(300);
                long closedAt = clock.ElapsedMilliseconds;
                orders.Close();
                Expect(reader.Join(5000), "the reader returned");
                Expect(other == null, "reader: " + other);
                Expect(woke != null && woke.Code == PerpsCode.StreamClosed, "woke with " + woke);
                Expect(wokeAt - closedAt < 1000, "woke " + (wokeAt - closedAt) + " ms after Close");
                orders.Close(); // idempotent
                orders.Dispose();
                Equal(PerpsCode.StreamClosed, Throws(() => orders.Next(0)).Code);
                Equal(PerpsCode.StreamClosed, Throws(() => orders.NewOrder("{}")).Code);
                Equal(PerpsCode.StreamClosed, Throws(() => orders.CancelOrder("{}")).Code);
            });
        }

        using (var client = new Client(baseUrl, perpsUrl))
        {
            Test("stream: public depth_book, levels sorted best first", () =>
            {
                // XAG-USD's bids (100.04 … 99.95 around the default mark) sort differently as strings.
                using (var stream = client.OpenStream(null, "[{\"channel\":\"depth_book\",\"symbol\":\"XAG-USD\"}]"))
                {
                    for (int n = 0; n < 3; n++) // the snapshot, then pushes (each shuffled by the venue)
                    {
                        var e = NextWhere(stream, x => (string)x["channel"] == "depth_book");
                        Equal("XAG-USD", (string)e["symbol"]);
                        var book = Obj(e["data"]);
                        Expect(((List<object>)book["bids"]).All(l => ((List<object>)l)[0] is string), "prices as the venue's text");
                        var bids = ((List<object>)book["bids"]).Select(l => Dec(((List<object>)l)[0])).ToList();
                        var asks = ((List<object>)book["asks"]).Select(l => Dec(((List<object>)l)[0])).ToList();
                        Expect(bids.Count == 10 && asks.Count == 10 && bids[0] < asks[0], "book sides");
                        for (int i = 1; i < 10; i++) Expect(bids[i - 1] > bids[i], "bids high to low: " + string.Join(",", bids));
                        for (int i = 1; i < 10; i++) Expect(asks[i - 1] < asks[i], "asks low to high: " + string.Join(",", asks));
                    }
                }
                var err = Throws(() => client.OpenStream(null, "[{\"channel\":\"order\"}]")); // an account channel needs a session
                Equal(PerpsCode.InvalidArgument, err.Code);
                err = Throws(() => client.OpenStream(null, "[{\"channel\":\"kline\",\"symbol\":\"BTC-USD\"}]"));
                Expect(err.Code == PerpsCode.InvalidArgument && err.Message.Contains("kline"), "message " + err.Message);
            });

            Test("stream: one never disposed is closed by its finalizer (its connection leaves the venue), freed off its thread", () =>
            {
                // The steps of the collected stream's end, in order, each with the thread it ran
                // on (StreamHandle.collectedHook: private, tests only), and a sentinel's
                // finalizer. The free is held (its "freeing" step blocks, up to 10 s) until the
                // sentinel is finalized, as a slow I/O thread would hold perps_stream_free: the
                // sentinel is finalized before "freed" only if the finalizer thread did not wait
                // for the free. On the thread that closed the stream the free is not held: a free
                // moved back onto the finalizer thread fails on its thread, at once.
                var hook = typeof(Client).Assembly.GetType("Perps.StreamHandle")
                    .GetField("collectedHook", System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Static);
                var steps = new List<KeyValuePair<string, Thread>>();
                Func<string> seen = () => { lock (steps) return string.Join(", ", steps.Select(x => x.Key + " on " + Describe(x.Value))); };
                Func<string, Thread> threadOf = step => { lock (steps) return steps.Where(x => x.Key == step).Select(x => x.Value).FirstOrDefault(); };
                var sentinelFinalized = new ManualResetEventSlim();
                Func<int> marketConnections = () => Admin("ws/connections").Split(new[] { "\"ws-stream\"" }, StringSplitOptions.None).Length - 1;
                // Earlier tests' collected streams, if any, end before the hook is set.
                GC.Collect();
                GC.WaitForPendingFinalizers();
                hook.SetValue(null, (Action<string>)(step =>
                {
                    lock (steps) steps.Add(new KeyValuePair<string, Thread>(step, Thread.CurrentThread));
                    if (step == "freeing" && Thread.CurrentThread != threadOf("closed")) sentinelFinalized.Wait(10000);
                }));
                try
                {
                    int before = marketConnections();
                    // Opened on a thread that then ends, so that no stack slot (Mono scans stacks
                    // conservatively) keeps the stream reachable.
                    var opener = new Thread(() =>
                    {
                        var stream = client.OpenStream(null, "[{\"channel\":\"price\",\"symbol\":\"BTC-USD\"}]");
                        NextWhere(stream, x => (string)x["channel"] == "status" && (string)x["state"] == "connected");
                    });
                    opener.Start();
                    opener.Join();
                    Equal(before + 1, marketConnections());
                    var deadline = DateTime.UtcNow.AddSeconds(10);
                    while (threadOf("freeing") == null)
                    {
                        Expect(DateTime.UtcNow < deadline, "the collected stream's free never started; steps: " + seen());
                        GC.Collect();
                        Thread.Sleep(50);
                    }
                    Thread closedOn = threadOf("closed"), freeingOn = threadOf("freeing");
                    Expect(closedOn != null && freeingOn != closedOn, "the free started on another thread than the close; steps: " + seen());

                    // With that free still held, a finalizer of a later collection runs.
                    var maker = new Thread(() => new FinalizerSentinel(() =>
                    {
                        lock (steps) steps.Add(new KeyValuePair<string, Thread>("sentinel finalized", Thread.CurrentThread));
                        sentinelFinalized.Set();
                    }));
                    maker.Start();
                    maker.Join();
                    deadline = DateTime.UtcNow.AddSeconds(5);
                    while (!sentinelFinalized.IsSet)
                    {
                        Expect(DateTime.UtcNow < deadline, "no finalizer ran while the stream's free was held: the finalizer thread waits for it; steps: " + seen());
                        GC.Collect();
                        Thread.Sleep(50);
                    }
                    deadline = DateTime.UtcNow.AddSeconds(10);
                    while (threadOf("freed") == null)
                    {
                        Expect(DateTime.UtcNow < deadline, "the collected stream was never freed; steps: " + seen());
                        Thread.Sleep(20);
                    }
                    while (marketConnections() != before)
                    {
                        Expect(DateTime.UtcNow < deadline, "the stream's connection is still open: its finalizer did not close it");
                        Thread.Sleep(50);
                    }

                    lock (steps)
                    {
                        Equal("closed, freeing, sentinel finalized, freed", string.Join(", ", steps.Select(x => x.Key)));
                        // The process has one finalizer thread: the sentinel's finalizer ran on it.
                        Thread finalizerThread = steps[2].Value, freedOn = steps[3].Value;
                        Expect(closedOn == finalizerThread, "closed on the finalizer thread; steps: " + seen());
                        Expect(freedOn == freeingOn && freedOn != finalizerThread && freedOn.IsThreadPoolThread && freedOn.IsBackground,
                            "freed on a thread-pool thread; steps: " + seen());
                    }
                }
                finally
                {
                    hook.SetValue(null, null);
                    sentinelFinalized.Set();
                }
            });
        }

        // A write that finds the socket full waits read_timeout_ms; the stalled venue's silence
        // must not end the connection first (stream_idle_timeout_ms).
        using (var client = new Client(baseUrl, perpsUrl, "{\"read_timeout_ms\":2000,\"stream_idle_timeout_ms\":120000}"))
        using (var session = new Session())
        {
            client.Signin(session, "bsc", WalletKey, 3600);
            Test("stream: a partly written order frame is named by its envelope request_id (StreamRequestId)", () =>
            {
                string bid = FarBid(client);
                using (var orders = client.OpenOrderStream(session))
                {
                    NextWhere(orders, IsStatus("connected"));
                    string firstId = (string)Obj(Json(orders.NewOrder(LimitBuy(bid, "0.01", ""))))["request_id"];
                    NextWhere(orders, ResponseTo(firstId, true));

                    // The venue stops reading (its socket stays open): orders until one does not fit.
                    Expect(long.Parse(FlatJson(Admin("ws/stall", "{}"))["stalled"]) >= 1, "a connection stalled");
                    var written = new HashSet<string>();
                    string last = null;
                    PerpsException e = null;
                    var clock = Stopwatch.StartNew();
                    while (written.Count < 50000 && clock.ElapsedMilliseconds < 60000)
                    {
                        try { last = (string)Obj(Json(orders.NewOrder(LimitBuy(bid, "0.01", ""))))["request_id"]; }
                        catch (PerpsException failure) { e = failure; break; }
                        written.Add(last);
                    }
                    Expect(e != null && written.Count > 0, written.Count + " orders written in full, then " + e);
                    Expect((e.Code == PerpsCode.Timeout || e.Code == PerpsCode.Transport) && e.MayHaveReachedVenue, "the failed write: " + e);
                    // The envelope request_id of the partly written frame: the one the message
                    // names, a new request (none of those written in full), not the x-request-id.
                    string id = e.StreamRequestId;
                    Expect(id != null && Uuid4.IsMatch(id), "StreamRequestId " + id);
                    Expect(e.Message.Contains("request_id " + id + " may have been partly sent"), "message " + e.Message);
                    Expect(!written.Contains(id) && id != firstId, "a new request");
                    Expect(e.XRequestId != null && e.XRequestId != id && e.ClOrdId != null, "XRequestId " + e.XRequestId);

                    // The connection is replaced; its "disconnected" event lists that request as
                    // awaiting its outcome, by the same id, with the orders written before it.
                    var unanswered = ((List<object>)NextWhere(orders, IsStatus("disconnected"))["unanswered"]).Cast<string>().ToList();
                    Expect(unanswered.Contains(id) && unanswered.Contains(last), unanswered.Count + " unanswered");
                }
            });
        }
    }
}

/// <summary>Runs its action when finalized, on the finalizer thread: shows that thread is free,
/// and which thread it is.</summary>
sealed class FinalizerSentinel
{
    private readonly Action finalized;

    public FinalizerSentinel(Action finalized) { this.finalized = finalized; }

    ~FinalizerSentinel() { finalized(); }
}
