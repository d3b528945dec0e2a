package perps;

/** Library-wide information. */
public final class Perps {
    private Perps() {
    }

    /** "MAJOR.MINOR.PATCH" (a static string in the library: copied, not freed). */
    public static String version() {
        return PerpsNative.LIB.perps_version().getString(0, "UTF-8");
    }
}
