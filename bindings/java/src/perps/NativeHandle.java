package perps;

import com.sun.jna.Pointer;
import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * An owned libperps handle: {@link #close()} frees it once (later calls do nothing); a
 * {@link Cleaner} frees it if the object becomes unreachable unclosed (the safety net, not the
 * plan: close handles with try-with-resources).
 *
 * <p>Every method that passes {@link #ptr()} to the library ends with
 * {@code Reference.reachabilityFence(this)}: without it the JIT may consider the object
 * unreachable during the native call and the Cleaner could free the handle under it.
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

    /** Free the native handle now. Idempotent. */
    @Override
    public final void close() {
        cleanable.clean();
    }
}
