package perps;

import static perps.PerpsNative.LIB;
import static perps.PerpsNative.utf8;

import com.sun.jna.ptr.PointerByReference;
import java.util.Objects;

/** Wallet helpers for a wallet key held in-process. */
public final class Wallet {
    private Wallet() {
    }

    /**
     * The EIP-55 (bsc) or base58 (solana) address of a wallet key. A String key cannot be
     * wiped: {@link #address(String, char[])} and {@link #address(String, byte[])} take one the
     * caller can wipe.
     */
    public static String address(String chain, String privateKey) {
        try (PerpsNative.Secret key = new PerpsNative.Secret(privateKey)) {
            return address(chain, key);
        }
    }

    /**
     * {@link #address(String, String)} with the key in a {@code char[]}, which is only read
     * (wipe it yourself, e.g. {@code Arrays.fill(key, '\0')}, when done); the binding's own
     * UTF-8 copies are zeroed before the call returns, failed calls included.
     */
    public static String address(String chain, char[] privateKey) {
        try (PerpsNative.Secret key = new PerpsNative.Secret(privateKey)) {
            return address(chain, key);
        }
    }

    /**
     * {@link #address(String, String)} with the key as UTF-8 bytes (no NUL; invalid UTF-8 is
     * the library's INVALID_ARGUMENT), which are only read (wipe them yourself when done); the
     * binding's native copy is zeroed before the call returns, failed calls included.
     */
    public static String address(String chain, byte[] privateKey) {
        try (PerpsNative.Secret key = new PerpsNative.Secret(privateKey)) {
            return address(chain, key);
        }
    }

    private static String address(String chain, PerpsNative.Secret key) {
        PointerByReference err = new PointerByReference();
        return PerpsNative.take(LIB.perps_wallet_address(utf8(chain), key.pointer(), err), err);
    }

    /**
     * The exact login signature for a sign-in payload (from {@link Client#prepareSignin}). A
     * String key cannot be wiped: {@link #sign(String, char[], String)} and
     * {@link #sign(String, byte[], String)} take one the caller can wipe.
     */
    public static String sign(String chain, String privateKey, String payloadJson) {
        try (PerpsNative.Secret key = new PerpsNative.Secret(privateKey)) {
            return sign(chain, key, payloadJson);
        }
    }

    /**
     * {@link #sign(String, String, String)} with the key in a {@code char[]}, which is only read
     * (wipe it yourself when done); the binding's own UTF-8 copies are zeroed before the call
     * returns, failed calls included.
     */
    public static String sign(String chain, char[] privateKey, String payloadJson) {
        try (PerpsNative.Secret key = new PerpsNative.Secret(privateKey)) {
            return sign(chain, key, payloadJson);
        }
    }

    /**
     * {@link #sign(String, String, String)} with the key as UTF-8 bytes (no NUL), which are only
     * read (wipe them yourself when done); the binding's native copy is zeroed before the call
     * returns, failed calls included.
     */
    public static String sign(String chain, byte[] privateKey, String payloadJson) {
        try (PerpsNative.Secret key = new PerpsNative.Secret(privateKey)) {
            return sign(chain, key, payloadJson);
        }
    }

    private static String sign(String chain, PerpsNative.Secret key, String payloadJson) {
        PointerByReference err = new PointerByReference();
        return PerpsNative.take(LIB.perps_wallet_sign(utf8(chain), key.pointer(), utf8(payloadJson), err), err);
    }

    /** Wrap a raw 64-byte Ed25519 signature made elsewhere into the Solana login signature. */
    public static String wrapSolanaSignature(String payloadJson, String address, byte[] signature) {
        Objects.requireNonNull(signature, "signature");
        PointerByReference err = new PointerByReference();
        return PerpsNative.take(LIB.perps_wallet_wrap_solana_signature(utf8(payloadJson), utf8(address),
                signature, new PerpsNative.SizeT(signature.length), err), err);
    }
}
