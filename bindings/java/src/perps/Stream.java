package perps;

import static perps.PerpsNative.LIB;
import static perps.PerpsNative.utf8;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.util.function.Consumer;

/**
 * One of the venue's WebSockets: the market + account stream ({@link Client#openStream}) or the
 * order stream ({@link Client#openOrderStream}), served by a background I/O thread of the
 * library that never runs Java code. Read its events with a blocking {@link #next(long)} on a
 * thread of your choosing (the call cannot be interrupted: {@link Thread#interrupt()} does not
 * wake it; {@link #close()} from another thread does, or use a timeout).
 *
 * <p>{@code next}, {@code newOrder}, {@code cancelOrder} and {@code close} may run on different
 * threads at once. {@link #close()} first closes the stream in the library, which wakes a
 * {@code next} blocked in another thread at once (it throws {@link PerpsException} with
 * {@link PerpsCode#STREAM_CLOSED}); then, like every handle's close(), it waits for the calls
 * in flight and frees the stream. Any call after close() throws STREAM_CLOSED. The stream keeps
 * what it needs of its Client and Session: they may be closed first.
 *
 * <p>Close streams explicitly (try-with-resources). One left unreachable unclosed is closed by
 * the {@link java.lang.ref.Cleaner} at once (its connection ends), and freed on a daemon thread
 * of its own, not the Cleaner's: freeing waits up to about 2 s for the library's I/O thread and
 * would hold up every other cleanup, as in the Go, Python and C# bindings.
 */
public final class Stream extends NativeHandle {
    /**
     * Tests only (package-private, set by reflection): told "closed" on the Cleaner's thread once
     * it has closed a collected stream, then "freed" on the thread that freed it.
     */
    static volatile Consumer<String> collectedHook;

    Stream(Pointer pointer) {
        super(pointer, LIB::perps_stream_free, Stream::collected);
    }

    /**
     * The Cleaner, for a stream never closed: perps_stream_free waits up to about 2 s for the
     * library's I/O thread, and would hold the Cleaner's one thread (every other handle's
     * cleanup behind it) that long; so close the stream here (which never waits long and tells
     * the I/O thread to end), and free it on a daemon thread of its own, as the Go, Python and
     * C# bindings do. No call is using the stream (it is unreachable), and the pointer was
     * taken once: close() cannot free it too.
     */
    private static void collected(Pointer stream) {
        LIB.perps_stream_close(stream);
        tell("closed");
        Runnable free = () -> {
            LIB.perps_stream_free(stream);
            tell("freed");
        };
        try {
            Thread freer = new Thread(free, "perps-stream-free");
            freer.setDaemon(true);
            freer.start();
        } catch (OutOfMemoryError | RuntimeException noThread) {
            free.run(); // no new thread: free it here rather than leak it (the thread never started)
        }
    }

    private static void tell(String event) {
        Consumer<String> hook = collectedHook;
        if (hook != null) {
            hook.accept(event);
        }
    }

    /**
     * The next event, a JSON object (README "Streams": venue pushes, order_response frames,
     * status changes), waiting up to {@code timeoutMs} milliseconds (0: do not wait; negative:
     * until an event comes or the stream is closed); null when the time passes first. Throws
     * STREAM_CLOSED after close() (also when close() wakes it) or once a stream that ended (its
     * "failed" status event) has given all its events.
     */
    public String next(long timeoutMs) {
        return use(() -> {
            PointerByReference err = new PointerByReference();
            Pointer event = LIB.perps_stream_next(ptr(), timeoutMs, err);
            if (event == null && err.getValue() == null) {
                return null; // the time passed first
            }
            return PerpsNative.take(event, err);
        });
    }

    /** {@link #next(long)} without a time limit: until an event comes or the stream is closed. */
    public String next() {
        return next(-1);
    }

    /**
     * Order stream only: validate the order (as {@link Client#newOrder}, the symbol rules too with
     * the client option symbol_rules), sign it and write the order:new frame. Returns
     * {"request_id":…,"cl_ord_id":…} once the frame is written, without waiting for the venue:
     * its replies come as order_response events with that request_id (the "accepted" ack with
     * "final":false, then the outcome with "final":true). Never retried: on any PerpsException
     * with mayHaveReachedVenue() (TRANSPORT, TIMEOUT when the venue does not read the frame
     * within read_timeout_ms, STREAM_CLOSED when close() cut a begun write short), look the
     * order up by its cl_ord_id first.
     */
    public String newOrder(String orderJson) {
        return takeString(err -> LIB.perps_stream_new_order(ptr(), utf8(orderJson), err));
    }

    /**
     * Order stream only: a signed order:cancel for {"order_id":N} and/or {"cl_ord_id":"…"};
     * returns {"request_id":…,…} once written; replies as for {@link #newOrder}.
     */
    public String cancelOrder(String paramsJson) {
        return takeString(err -> LIB.perps_stream_cancel_order(ptr(), utf8(paramsJson), err));
    }

    /** close(): wake the calls blocked in perps_stream_next before waiting for them. */
    @Override
    void wake(Pointer pointer) {
        LIB.perps_stream_close(pointer);
    }

    @Override
    RuntimeException closedError() {
        return new PerpsException(PerpsCode.STREAM_CLOSED, PerpsCode.STREAM_CLOSED.value(), "the stream is closed", 0,
                null, false);
    }
}
