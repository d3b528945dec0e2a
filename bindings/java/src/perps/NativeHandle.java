package perps;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * An owned libperps handle: {@link #close()} frees it once (later calls do nothing); a
 * {@link Cleaner} frees it if the object becomes unreachable unclosed (the safety net, not the
 * plan: close handles with try-with-resources).
 *
 * <p>Every method that passes {@link #ptr()} to the library ends with
 * {@code Reference.reachabilityFence(this)} (most through {@link #takeString} and
 * {@link #checkCode}): without it the JIT may consider the object unreachable during the
 * native call and the Cleaner could free the handle under it.
 *
 * <p>Like the C API: do not close a handle while another thread is still using it.
 */
abstract class NativeHandle implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /** The pointer and how to free it; must not refer to the handle object. */
    private static final class Owner implements Runnable {
        private final AtomicReference<Pointer> pointer;
        private final Consumer<Pointer> free;

        Owner(Pointer pointer, Consumer<Pointer> free) {
            this.pointer = new AtomicReference<>(pointer);
            this.free = free;
        }

        @Override
        public void run() {
            Pointer p = pointer.getAndSet(null);
            if (p != null) {
                free.accept(p);
            }
        }
    }

    private final Owner owner;
    private final Cleaner.Cleanable cleanable;

    NativeHandle(Pointer pointer, Consumer<Pointer> free) {
        this.owner = new Owner(pointer, free);
        this.cleanable = CLEANER.register(this, owner);
    }

    /** The live pointer; IllegalStateException once closed. */
    final Pointer ptr() {
        Pointer p = owner.pointer.get();
        if (p == null) {
            throw new IllegalStateException(getClass().getSimpleName() + " is closed");
        }
        return p;
    }

    /**
     * Make a library call that uses this handle and returns an owned string (NULL and
     * {@code *err} on failure: thrown); the string is copied and freed. This handle stays
     * reachable until the call has returned.
     */
    final String takeString(Function<PointerByReference, Pointer> call) {
        PointerByReference err = new PointerByReference();
        try {
            return PerpsNative.take(call.apply(err), err);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The same for a call that also uses {@code other}, which stays reachable as well. */
    final String takeString(NativeHandle other, Function<PointerByReference, Pointer> call) {
        try {
            return takeString(call);
        } finally {
            Reference.reachabilityFence(other);
        }
    }

    /** A library call that uses this handle and returns a perps_code (non-zero: thrown). */
    final void checkCode(ToIntFunction<PointerByReference> call) {
        PointerByReference err = new PointerByReference();
        try {
            PerpsNative.check(call.applyAsInt(err), err);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Free the native handle now. Idempotent. */
    @Override
    public final void close() {
        cleanable.clean();
    }
}
