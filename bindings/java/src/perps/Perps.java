package perps;

/** Library-wide information. */
public final class Perps {
    /**
     * The libperps version this binding is made for: Cargo.toml's (scripts/package.sh refuses to
     * package a binding whose constant differs, and names the jar and the POM after the same).
     * The library loaded must have a compatible ABI (its MAJOR.MINOR while 0.x), else the first
     * call throws {@link UnsatisfiedLinkError} naming both versions and the file.
     */
    public static final String BINDING_VERSION = "0.1.0";

    private Perps() {
    }

    /** "MAJOR.MINOR.PATCH" (a static string in the library: copied, not freed). */
    public static String version() {
        return PerpsNative.LIB.perps_version().getString(0, "UTF-8");
    }
}
