package perps;

import static perps.PerpsNative.LIB;
import static perps.PerpsNative.utf8;

import com.sun.jna.ptr.PointerByReference;

/** Orders without the network. */
public final class Order {
    private Order() {
    }

    /** The exact body {@link Client#newOrder} would sign and send (INVALID_ORDER names the field). */
    public static String serialize(String orderJson) {
        PointerByReference err = new PointerByReference();
        return PerpsNative.take(LIB.perps_order_serialize(utf8(orderJson), err), err);
    }
}
