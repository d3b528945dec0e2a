package perps;

import com.sun.jna.Library;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The check that the libperps JNA loaded has the ABI of the one this binding is made for
 * ({@link Perps#BINDING_VERSION}). {@code Native.load("perps")} takes any {@code libperps.so}
 * ({@code jna.library.path}, the system's unversioned symlink, the jar's copy), not the SONAME
 * {@code libperps.so.0.MINOR} a C program records; while the version is 0.x every minor release
 * may change the ABI, so another 0.minor could run with the wrong structs and codes.
 * {@link PerpsNative#LIB} passes through {@link #verified} before any call: a refusal is an
 * {@link UnsatisfiedLinkError} from the first call (later ones: {@link NoClassDefFoundError}).
 */
final class AbiCheck {
    private static final Pattern VERSION = Pattern.compile("(\\d{1,9})\\.(\\d{1,9})\\.\\d{1,9}([-+].*)?");

    private AbiCheck() {
    }

    /** MAJOR and MINOR of "MAJOR.MINOR.PATCH[-pre][+build]", or null. */
    static int[] majorMinor(String version) {
        Matcher m = version == null ? null : VERSION.matcher(version);
        if (m == null || !m.matches()) {
            return null;
        }
        return new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))};
    }

    /**
     * Whether a libperps of version {@code library} serves a binding made for {@code binding}:
     * the same 0.minor while the version is 0.x (each 0.x minor may break the ABI, as the SONAME
     * libperps.so.0.MINOR says), the same major and at least the binding's minor from 1.0 on
     * (minor releases only add).
     */
    static boolean compatible(String binding, String library) {
        int[] b = majorMinor(binding);
        int[] l = majorMinor(library);
        if (b == null || l == null || b[0] != l[0]) {
            return false;
        }
        return b[0] == 0 ? l[1] == b[1] : l[1] >= b[1];
    }

    /** Why the library cannot be used (both versions, where it was loaded from, what to do), or null. */
    static String refusal(String binding, String library, String loadedFrom) {
        if (compatible(binding, library)) {
            return null;
        }
        int[] b = majorMinor(binding);
        String needed = b == null ? "libperps " + binding
                : b[0] == 0 ? "libperps 0." + b[1] + ".x" : "libperps " + b[0] + ".x, x >= " + b[1];
        return "libperps " + library + " was loaded (from " + loadedFrom + "), but this binding (perps.jar) is made for "
                + "libperps " + binding + " and needs " + needed + ": another version has another ABI. Put one of "
                + needed + " on -Djna.library.path (searched first), or remove or upgrade the one loaded, so that "
                + "JNA finds the jar's own copy.";
    }

    /** The library, once its version has passed {@link #refusal}; else the refusal, thrown. */
    static PerpsNative verified(PerpsNative lib) {
        String version = lib.perps_version().getString(0, "UTF-8");
        String refusal = refusal(Perps.BINDING_VERSION, version, loadedFrom(lib));
        if (refusal != null) {
            throw new UnsatisfiedLinkError(refusal);
        }
        return lib;
    }

    /** The file JNA loaded (or the libperps files mapped into the process), or "an unknown path". */
    static String loadedFrom(Object lib) {
        try {
            InvocationHandler handler = Proxy.getInvocationHandler(lib);
            if (handler instanceof Library.Handler) {
                File file = ((Library.Handler) handler).getNativeLibrary().getFile();
                if (file != null) {
                    return file.getPath();
                }
            }
        } catch (RuntimeException e) {
            // not a JNA proxy: look in the process's mappings
        }
        Set<String> mapped = new LinkedHashSet<>();
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
                int slash = line.indexOf('/');
                if (slash >= 0 && Paths.get(line.substring(slash)).getFileName().toString().startsWith("libperps")) {
                    mapped.add(line.substring(slash));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return mapped.isEmpty() ? "an unknown path" : String.join(", ", mapped);
    }
}
