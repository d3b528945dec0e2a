/*
 * libperps C++17 API: a header-only layer over the C API in perps.h.
 *
 *   perps::Client client(base_url, perps_url);            // owns a perps_client*
 *   perps::Session session;                               // owns a perps_session* (fresh key)
 *   client.signin(session, "bsc", wallet_private_key);    // or prepare_signin + wallet_sign + login
 *   std::string answer = client.new_order(session, order_json);  // carries its cl_ord_id
 *   client.cancel_order(session, R"({"cl_ord_id":"..."})");        // one method per endpoint
 *
 * What it adds to the C API, and nothing else:
 *  - Ownership. Client and Session are move-only and free their handle exactly once; a
 *    moved-from object holds no handle (using it throws PERPS_INVALID_ARGUMENT, destroying
 *    it is a no-op). Every char* the library returns is copied into a std::string and freed
 *    with perps_string_free (which overwrites it) before the function returns or throws.
 *  - Errors. A failing call throws perps::Error (a std::runtime_error) carrying the code,
 *    message, HTTP status, venue body, may_have_reached_venue flag, the order's cl_ord_id,
 *    the x-request-id sent, retry_after_ms and stream_request_id, copied out of the
 *    perps_error, which is then freed. Error is nothrow-copyable, as exceptions should be.
 *  - Inputs. std::string arguments containing a NUL byte throw PERPS_INVALID_ARGUMENT here
 *    instead of being cut short by the C API (a body must be signed and sent in full);
 *    only sign_body_into takes raw bytes (a std::string_view, signed byte for byte).
 *
 * Secrets: results holding secrets (perps::Session::token(), login() answers, wallet
 * signatures) end up in ordinary std::string memory, which is not overwritten when freed.
 * Keep them short-lived, or use the C API for those calls.
 *
 * Threads: as in C. A Client and a Session may be shared between threads (their methods
 * may run concurrently, including the non-const ones); so may a Stream (next, new_order,
 * cancel_order, close). Do not move or destroy one while another thread is using it: to end
 * a Stream that another thread reads, close() it, and destroy it once that call returned.
 *
 * Without exceptions (-fno-exceptions, detected through __cpp_exceptions; or define
 * PERPS_HPP_EXCEPTIONS 0): every failure that would throw perps::Error calls the error
 * handler instead, which must not return. The default prints "libperps: CODE_NAME (n):
 * message" to stderr and calls std::abort(); perps::set_error_handler installs your own, to
 * log and end the process (std::abort, std::_Exit, std::quick_exit). Never longjmp out of it:
 * the jump would skip the destructors of the wrapper's and your call's temporaries (undefined
 * behaviour in C++, and every failure would leak the error and strings it holds). Calls that
 * must fail softly in such a program use the C API (perps.h) directly, or
 * try_sign_body_into, which never fails that way. (For binding authors: a failure goes through detail::fail, never a bare `throw`,
 * so that this header keeps compiling with -fno-exceptions; tests/cpp/run.sh checks it.)
 *
 * Needs C++17 (an older standard stops at an #error; C programs include perps.h).
 * This file checks the standard and includes its parts from perps/ beside it (errors,
 * session, client, stream); include this one, never a part alone.
 * Link with -lperps (see `pkg-config --cflags --libs perps`, or CMake's perps::perps).
 */
#ifndef PERPS_HPP
#define PERPS_HPP

#if defined(_MSVC_LANG) && _MSVC_LANG > __cplusplus
#define PERPS_HPP_STANDARD _MSVC_LANG
#else
#define PERPS_HPP_STANDARD __cplusplus
#endif

#if !defined(__cplusplus) || PERPS_HPP_STANDARD < 201703L
#error "perps.hpp needs C++17 or newer (compile with -std=c++17); C and older C++ can use perps.h"
#else

#ifndef PERPS_HPP_EXCEPTIONS
#if defined(__cpp_exceptions) || defined(_CPPUNWIND)
#define PERPS_HPP_EXCEPTIONS 1
#else
#define PERPS_HPP_EXCEPTIONS 0
#endif
#endif

#include "perps.h"

#if !PERPS_HPP_EXCEPTIONS
#include <atomic>
#include <cstdio>
#include <cstdlib>
#endif
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The layer, in parts (include/perps/): each needs the ones before it.
#define PERPS_HPP_INCLUDING_PARTS 1
#include "perps/error.hpp"
#include "perps/session.hpp"
#include "perps/client.hpp"
#include "perps/stream.hpp"
#undef PERPS_HPP_INCLUDING_PARTS

#endif  // C++17
#endif  // PERPS_HPP
