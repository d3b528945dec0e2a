package perps;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

/**
 * An owned libperps handle: {@link #close()} frees it once (later calls do nothing); a
 * {@link Cleaner} frees it if the object becomes unreachable unclosed (the safety net, not the
 * plan: close handles with try-with-resources; a {@link Stream} is closed there and freed on a
 * thread of its own, not the Cleaner's).
 *
 * <p>Every library call that uses the handle runs inside {@link #use} (most through
 * {@link #takeString} and {@link #checkCode}): it holds the handle's read lock, which
 * {@link #close()} waits for (its write lock), so closing a handle that another thread is
 * still using waits for that call to return instead of freeing the handle under it, as the Go,
 * Python and C# bindings do; a call after close throws IllegalStateException. It also ends
 * with {@code Reference.reachabilityFence(this)}: without it the JIT may consider the object
 * unreachable during the native call and the Cleaner could free the handle under it.
 */
abstract class NativeHandle implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /**
     * The pointer, how {@link #close()} frees it and what the Cleaner does with it; must not
     * refer to the handle object. Whoever takes the pointer (getAndSet) is the only one to
     * free it: close() and the Cleaner racing cannot free it twice.
     */
    private static final class Owner implements Runnable {
        private final AtomicReference<Pointer> pointer;
        private final Consumer<Pointer> free;
        private final Consumer<Pointer> collected;

        Owner(Pointer pointer, Consumer<Pointer> free, Consumer<Pointer> collected) {
            this.pointer = new AtomicReference<>(pointer);
            this.free = free;
            this.collected = collected;
        }

        /** close(): free now, on the calling thread. */
        void free() {
            Pointer p = pointer.getAndSet(null);
            if (p != null) {
                free.accept(p);
            }
        }

        /** The Cleaner (or close() after free(), finding nothing): the handle was never closed. */
        @Override
        public void run() {
            Pointer p = pointer.getAndSet(null);
            if (p != null) {
                collected.accept(p);
            }
        }
    }

    private final Owner owner;
    private final Cleaner.Cleanable cleanable;
    /** Calls hold the read lock; close() takes the write lock. */
    private final ReentrantReadWriteLock lifetime = new ReentrantReadWriteLock();

    NativeHandle(Pointer pointer, Consumer<Pointer> free) {
        this(pointer, free, free);
    }

    /**
     * {@code collected}: what the Cleaner does with the pointer of a handle that became
     * unreachable unclosed, on the Cleaner's one thread, which it must not hold for long
     * ({@link Stream}: close at once, free on a thread of its own). It runs only once no call
     * is using the handle (every call ends with a reachability fence).
     */
    NativeHandle(Pointer pointer, Consumer<Pointer> free, Consumer<Pointer> collected) {
        this.owner = new Owner(pointer, free, collected);
        this.cleanable = CLEANER.register(this, owner);
    }

    /** The live pointer, inside {@link #use} only; IllegalStateException once closed. */
    final Pointer ptr() {
        if (lifetime.getReadHoldCount() == 0) {
            throw new IllegalStateException("internal: " + getClass().getSimpleName() + ".ptr() outside use()");
        }
        Pointer p = owner.pointer.get();
        if (p == null) {
            throw closedError();
        }
        return p;
    }

    /** What a call on a closed handle throws: IllegalStateException ({@link Stream}: its own). */
    RuntimeException closedError() {
        return new IllegalStateException(getClass().getSimpleName() + " is closed");
    }

    /**
     * Called by {@link #close()} before it waits for the calls in flight, with the pointer live
     * (under the read lock): a handle whose calls can block in the library for long wakes them
     * here, so that they return and release the read lock that close() then waits for
     * ({@link Stream}: perps_stream_close). Nothing by default.
     */
    void wake(Pointer pointer) {
    }

    /**
     * Make a library call that uses this handle and returns an owned string (NULL and
     * {@code *err} on failure: thrown); the string is copied and freed. This handle stays
     * reachable until the call has returned.
     */
    final String takeString(Function<PointerByReference, Pointer> call) {
        return use(() -> {
            PointerByReference err = new PointerByReference();
            return PerpsNative.take(call.apply(err), err);
        });
    }

    /**
     * The same for a call that also uses {@code other}, which stays open (its close() waits)
     * and reachable as well.
     */
    final String takeString(NativeHandle other, Function<PointerByReference, Pointer> call) {
        return other.use(() -> takeString(call));
    }

    /** A library call that uses this handle and returns a perps_code (non-zero: thrown). */
    final void checkCode(ToIntFunction<PointerByReference> call) {
        use(() -> {
            PointerByReference err = new PointerByReference();
            PerpsNative.check(call.applyAsInt(err), err);
            return null;
        });
    }

    /**
     * Run a library call that uses this handle: {@link #close()} on another thread waits until
     * it has returned, and the handle stays reachable until then.
     */
    final <T> T use(Supplier<T> call) {
        Lock read = lifetime.readLock();
        read.lock();
        try {
            return call.get();
        } finally {
            read.unlock();
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Free the native handle now, after the calls other threads are making with it have
     * returned (it waits for them; a {@link Stream} first wakes a next() blocked in the
     * library). Idempotent; later calls throw IllegalStateException ({@link Stream}:
     * PerpsException STREAM_CLOSED).
     */
    @Override
    public final void close() {
        Lock read = lifetime.readLock();
        read.lock();
        try {
            Pointer p = owner.pointer.get();
            if (p != null) {
                wake(p);
            }
        } finally {
            read.unlock();
        }
        Lock write = lifetime.writeLock();
        write.lock();
        try {
            owner.free(); // here, synchronously; the Cleaner then finds nothing
            cleanable.clean(); // unregisters it
        } finally {
            write.unlock();
            Reference.reachabilityFence(this);
        }
    }
}
