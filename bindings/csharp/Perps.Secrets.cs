// libperps for C#, secrets the caller can wipe: the char[] and byte[] forms of every secret
// argument (Client.Signin, Session.FromApiKey, Wallet.Address, Wallet.Sign). A string cannot
// be wiped, so a caller who reads a key from a vault into an array would otherwise have to
// make one. The array is only read, never written: the caller wipes it when done. The binding
// copies it into native memory with a NUL after it (NativeSecret: no garbage collector moves
// or copies it), calls the library, and zeroes and frees that copy before the call returns,
// failed calls included. A char[] (or a string: the string forms go the same way) is encoded
// straight into that memory, through no managed array; a byte[] is taken as UTF-8 and its UTF-8 checked by the library (InvalidArgument,
// naming the argument, as for any argument). An array holding a NUL is refused with the same
// InvalidArgument as a string holding one.

using System;
using System.Runtime.InteropServices;
using System.Text;

namespace Perps
{
    /// <summary>A secret argument as NUL-terminated UTF-8 in native memory the binding owns,
    /// zeroed and freed by Dispose. A null array is a NULL pointer.</summary>
    internal sealed class NativeSecret : IDisposable
    {
        private static readonly UTF8Encoding Utf8Strict = new UTF8Encoding(false, true);

        /// <summary>Tests only (set by reflection): told of each copy when made ("made": its
        /// bytes) and when disposed ("closed": its bytes after the wipe, read before the memory
        /// is freed), so that a test can check that every one is wiped.</summary>
        private static volatile Action<string, byte[]> seen = null;

        private IntPtr memory;
        private readonly int size;

        private NativeSecret(int size)
        {
            this.size = size;
            memory = size == 0 ? IntPtr.Zero : Marshal.AllocHGlobal(size);
        }

        /// <summary>The NUL-terminated copy, or IntPtr.Zero for a null array.</summary>
        internal IntPtr Pointer { get { return memory; } }

        /// <summary>A string secret (the string forms), encoded as UTF-8 into native memory,
        /// through no managed array: a byte[] made for the call could be moved by a garbage
        /// collection before the marshaller pins it, leaving a copy no one wipes. A lone
        /// surrogate is refused by the strict encoder (an ArgumentException), before anything
        /// is copied.</summary>
        internal static NativeSecret FromString(string s)
        {
            if (s == null) return new NativeSecret(0);
            if (s.IndexOf('\0') >= 0) throw Interop.NulRefused();
            // Counting validates (a lone surrogate throws) and writes no bytes anywhere.
            return Encode(Utf8Strict.GetByteCount(s), s.Length, i => s[i]);
        }

        /// <summary>A char[] secret, encoded as UTF-8 into native memory. A lone surrogate is
        /// refused as the strict encoder refuses it in a string (an ArgumentException), before
        /// anything is copied.</summary>
        internal static NativeSecret FromChars(char[] chars)
        {
            if (chars == null) return new NativeSecret(0);
            if (Array.IndexOf(chars, '\0') >= 0) throw Interop.NulRefused();
            // Counting validates (a lone surrogate throws) and writes no bytes anywhere.
            return Encode(Utf8Strict.GetByteCount(chars), chars.Length, i => chars[i]);
        }

        /// <summary>`length` UTF-16 units read by `at`, valid (counted by the strict encoder as
        /// `utf8Length` bytes), written as UTF-8 with a NUL after them into native memory.</summary>
        private static NativeSecret Encode(int utf8Length, int length, Func<int, char> at)
        {
            var secret = new NativeSecret(utf8Length + 1);
            try
            {
                int n = 0;
                for (int i = 0; i < length; i++)
                {
                    int c = at(i);
                    if (char.IsHighSurrogate(at(i))) { c = char.ConvertToUtf32(at(i), at(i + 1)); i++; } // a pair: counted above
                    if (c < 0x80)
                    {
                        secret.Write(ref n, c);
                    }
                    else if (c < 0x800)
                    {
                        secret.Write(ref n, 0xC0 | (c >> 6));
                        secret.Write(ref n, 0x80 | (c & 0x3F));
                    }
                    else if (c < 0x10000)
                    {
                        secret.Write(ref n, 0xE0 | (c >> 12));
                        secret.Write(ref n, 0x80 | ((c >> 6) & 0x3F));
                        secret.Write(ref n, 0x80 | (c & 0x3F));
                    }
                    else
                    {
                        secret.Write(ref n, 0xF0 | (c >> 18));
                        secret.Write(ref n, 0x80 | ((c >> 12) & 0x3F));
                        secret.Write(ref n, 0x80 | ((c >> 6) & 0x3F));
                        secret.Write(ref n, 0x80 | (c & 0x3F));
                    }
                }
                secret.Write(ref n, 0);
                if (n != secret.size) throw new InvalidOperationException("UTF-8 length " + n + ", counted " + secret.size);
            }
            catch
            {
                secret.Dispose();
                throw;
            }
            secret.Made();
            return secret;
        }

        /// <summary>A byte[] secret, already UTF-8, copied as it is with a NUL after it.</summary>
        internal static NativeSecret FromUtf8(byte[] bytes)
        {
            if (bytes == null) return new NativeSecret(0);
            if (Array.IndexOf(bytes, (byte)0) >= 0) throw Interop.NulRefused();
            var secret = new NativeSecret(bytes.Length + 1);
            Marshal.Copy(bytes, 0, secret.memory, bytes.Length);
            Marshal.WriteByte(secret.memory, bytes.Length, 0);
            secret.Made();
            return secret;
        }

        private void Write(ref int n, int b)
        {
            Marshal.WriteByte(memory, n++, (byte)b);
        }

        private void Made()
        {
            Action<string, byte[]> hook = seen;
            if (hook != null) hook("made", Read());
        }

        private byte[] Read()
        {
            var bytes = new byte[size];
            Marshal.Copy(memory, bytes, 0, size);
            return bytes;
        }

        /// <summary>Zero the copy, then free it. Twice is harmless.</summary>
        public void Dispose()
        {
            if (memory == IntPtr.Zero) return;
            Marshal.Copy(new byte[size], 0, memory, size);
            Action<string, byte[]> hook = seen;
            if (hook != null) hook("closed", Read());
            Marshal.FreeHGlobal(memory);
            memory = IntPtr.Zero;
        }
    }

    public sealed partial class Client
    {
        /// <summary><see cref="Signin(Session, string, string, long)"/> with the key in a
        /// char[], which is only read: wipe it yourself (Array.Clear) when done. The binding's
        /// native copy is zeroed before the call returns, failed calls included.</summary>
        public string Signin(Session session, string chain, char[] walletPrivateKey, long expiresSeconds)
        {
            using (var key = NativeSecret.FromChars(walletPrivateKey)) return Signin(session, chain, key, expiresSeconds);
        }

        /// <summary><see cref="Signin(Session, string, string, long)"/> with the key as UTF-8
        /// bytes (no NUL), which are only read: wipe them yourself when done. The binding's
        /// native copy is zeroed before the call returns, failed calls included.</summary>
        public string Signin(Session session, string chain, byte[] walletPrivateKey, long expiresSeconds)
        {
            using (var key = NativeSecret.FromUtf8(walletPrivateKey)) return Signin(session, chain, key, expiresSeconds);
        }

        private string Signin(Session session, string chain, NativeSecret key, long expiresSeconds)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_signin(handle, Session.Of(session), Interop.Utf8Z(chain), key.Pointer, expiresSeconds, ref err), err);
        }
    }

    public sealed partial class Session
    {
        /// <summary><see cref="FromApiKey(string, string)"/> with the token and key in char[]s,
        /// which are only read: wipe them yourself when done (the session keeps its own copies,
        /// zeroized when it is disposed). The binding's native copies are zeroed before the call
        /// returns, failed calls included.</summary>
        public static Session FromApiKey(char[] apiToken, char[] ed25519PrivateKey)
        {
            using (var token = NativeSecret.FromChars(apiToken))
            using (var key = NativeSecret.FromChars(ed25519PrivateKey))
                return FromApiKey(token, key);
        }

        /// <summary><see cref="FromApiKey(string, string)"/> with the token and key as UTF-8
        /// bytes (no NUL), which are only read: wipe them yourself when done. The binding's
        /// native copies are zeroed before the call returns, failed calls included.</summary>
        public static Session FromApiKey(byte[] apiToken, byte[] ed25519PrivateKey)
        {
            using (var token = NativeSecret.FromUtf8(apiToken))
            using (var key = NativeSecret.FromUtf8(ed25519PrivateKey))
                return FromApiKey(token, key);
        }

        private static Session FromApiKey(NativeSecret token, NativeSecret key)
        {
            IntPtr err = IntPtr.Zero;
            return new Session(Interop.TakeHandle(Native.perps_session_from_api_key(token.Pointer, key.Pointer, ref err), err));
        }
    }

    public static partial class Wallet
    {
        /// <summary><see cref="Address(string, string)"/> with the key in a char[], which is
        /// only read: wipe it yourself when done. The binding's native copy is zeroed before
        /// the call returns, failed calls included.</summary>
        public static string Address(string chain, char[] privateKey)
        {
            using (var key = NativeSecret.FromChars(privateKey)) return Address(chain, key);
        }

        /// <summary><see cref="Address(string, string)"/> with the key as UTF-8 bytes (no NUL),
        /// which are only read: wipe them yourself when done. The binding's native copy is
        /// zeroed before the call returns, failed calls included.</summary>
        public static string Address(string chain, byte[] privateKey)
        {
            using (var key = NativeSecret.FromUtf8(privateKey)) return Address(chain, key);
        }

        private static string Address(string chain, NativeSecret key)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_wallet_address(Interop.Utf8Z(chain), key.Pointer, ref err), err);
        }

        /// <summary><see cref="Sign(string, string, string)"/> with the key in a char[], which is
        /// only read: wipe it yourself when done. The binding's native copy is zeroed before
        /// the call returns, failed calls included.</summary>
        public static string Sign(string chain, char[] privateKey, string payloadJson)
        {
            using (var key = NativeSecret.FromChars(privateKey)) return Sign(chain, key, payloadJson);
        }

        /// <summary><see cref="Sign(string, string, string)"/> with the key as UTF-8 bytes (no
        /// NUL), which are only read: wipe them yourself when done. The binding's native copy is
        /// zeroed before the call returns, failed calls included.</summary>
        public static string Sign(string chain, byte[] privateKey, string payloadJson)
        {
            using (var key = NativeSecret.FromUtf8(privateKey)) return Sign(chain, key, payloadJson);
        }

        private static string Sign(string chain, NativeSecret key, string payloadJson)
        {
            IntPtr err = IntPtr.Zero;
            return Interop.Take(Native.perps_wallet_sign(Interop.Utf8Z(chain), key.Pointer, Interop.Utf8Z(payloadJson), ref err), err);
        }
    }
}
