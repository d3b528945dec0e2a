package perps;

import static perps.PerpsNative.LIB;
import static perps.PerpsNative.utf8;

import com.sun.jna.ptr.PointerByReference;
import java.util.Objects;

/** Wallet helpers for a wallet key held in-process. */
public final class Wallet {
    private Wallet() {
    }

    /** The EIP-55 (bsc) or base58 (solana) address of a wallet key. */
    public static String address(String chain, String privateKey) {
        PointerByReference err = new PointerByReference();
        try (PerpsNative.Secret key = new PerpsNative.Secret(privateKey)) {
            return PerpsNative.take(LIB.perps_wallet_address(utf8(chain), key.pointer(), err), err);
        }
    }

    /** The exact login signature for a sign-in payload (from {@link Client#prepareSignin}). */
    public static String sign(String chain, String privateKey, String payloadJson) {
        PointerByReference err = new PointerByReference();
        try (PerpsNative.Secret key = new PerpsNative.Secret(privateKey)) {
            return PerpsNative.take(LIB.perps_wallet_sign(utf8(chain), key.pointer(), utf8(payloadJson), err), err);
        }
    }

    /** Wrap a raw 64-byte Ed25519 signature made elsewhere into the Solana login signature. */
    public static String wrapSolanaSignature(String payloadJson, String address, byte[] signature) {
        Objects.requireNonNull(signature, "signature");
        PointerByReference err = new PointerByReference();
        return PerpsNative.take(LIB.perps_wallet_wrap_solana_signature(utf8(payloadJson), utf8(address),
                signature, new PerpsNative.SizeT(signature.length), err), err);
    }
}
