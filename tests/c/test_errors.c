/*
 * tests/c/test_errors.c: a careless caller's perps_error handling, under ASan/LSan/UBSan and
 * valgrind (tests/c/run.sh): reusing `err` without freeing the earlier error does not leak
 * it, a second perps_error_free does nothing, and a freed, foreign or garbage pointer left in
 * *err is overwritten without being read through — even a stale copy whose address the
 * allocator has given to another variable's error (the plain run reuses addresses; the
 * sanitizers' quarantine does not).
 */
#include "check.h"

#include <stdint.h>

static const char EVM_KEY[] = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

/* A call that fails with INVALID_ARGUMENT and a message naming `chain`. */
static char *fail(const char *chain, perps_error **err) { return perps_wallet_address(chain, EVM_KEY, err); }

static void test_reused_err_does_not_leak_the_earlier_error(void) {
    perps_error *err = NULL;
    CHECK(fail("eth", &err) == NULL);
    CHECK(err != NULL);
    const perps_error *first = err;
    /* The caller forgets perps_error_free and reuses err: the earlier error is freed (a leak
     * would fail this program under LeakSanitizer and valgrind). */
    for (int i = 0; i < 100; i++) {
        CHECK(fail(i % 2 ? "tron" : "eth", &err) == NULL);
    }
    CHECK(err != NULL);
    CHECK(strstr(perps_error_message(err), "\"tron\"") != NULL); /* the last call's error */
    /* The earlier error is no longer live: its accessors read it as no error at all. */
    if (first != err) {
        CHECK(strcmp(perps_error_message(first), "no error object (NULL)") == 0);
        CHECK(perps_error_code(first) == PERPS_INVALID_ARGUMENT);
    }
    perps_error_free(err);
}

static void test_double_free_is_a_no_op(void) {
    perps_error *err = NULL;
    CHECK(fail("eth", &err) == NULL);
    perps_error *copy = err;
    perps_error_free(err);
    perps_error_free(copy); /* already freed: nothing happens (ASan would report a double free) */
    CHECK(perps_error_http_status(copy) == 0);
    CHECK(perps_error_body(copy) == NULL);
    CHECK(!perps_error_may_have_reached_venue(copy));
    /* A freed error left in err and then a failing call: overwritten, not freed again. */
    CHECK(fail("tron", &err) == NULL);
    CHECK(err != NULL);
    CHECK(strstr(perps_error_message(err), "tron") != NULL);
    perps_error_free(err);
}

static void test_a_stale_pointer_never_frees_another_variables_error(void) {
    perps_error *a = NULL, *b = NULL;
    CHECK(fail("eth", &a) == NULL);
    perps_error_free(a);             /* a is left dangling */
    CHECK(fail("tron", &b) == NULL); /* b may be given a's old address */
    CHECK(fail("eth", &a) == NULL);  /* a failing call through the stale a: b is not touched */
    CHECK(a != NULL && a != b);
    CHECK(strstr(perps_error_message(b), "\"tron\"") != NULL);
    CHECK(strstr(perps_error_message(a), "\"eth\"") != NULL);
    perps_error_free(a);
    perps_error_free(b);
}

static void test_foreign_and_garbage_pointers_are_only_overwritten(void) {
    /* A pointer to the caller's own memory: never freed, never written through. */
    unsigned char mine[64];
    memset(mine, 0xA5, sizeof mine);
    perps_error *err = (perps_error *)(void *)mine;
    CHECK(fail("eth", &err) == NULL);
    CHECK(err != NULL && (void *)err != (void *)mine);
    int untouched = 1;
    for (size_t i = 0; i < sizeof mine; i++) {
        untouched &= mine[i] == 0xA5;
    }
    CHECK(untouched);
    perps_error_free(err);
    /* Uninitialised-looking garbage. */
    err = (perps_error *)(uintptr_t)0x10;
    CHECK(fail("eth", &err) == NULL);
    CHECK(err != NULL && (uintptr_t)err != 0x10);
    perps_error_free(err);
    /* perps_error_free of a pointer the library never made does nothing. */
    perps_error_free((perps_error *)(void *)mine);
}

static void test_success_leaves_err_alone(void) {
    perps_error *err = NULL;
    CHECK(fail("eth", &err) == NULL);
    perps_error *held = err;
    char *address = perps_wallet_address("bsc", EVM_KEY, &err);
    CHECK(address != NULL);
    CHECK(err == held); /* *err is written only on failure: the earlier error is still live */
    CHECK(perps_error_code(err) == PERPS_INVALID_ARGUMENT);
    perps_string_free(address);
    perps_error_free(err);
}

int main(void) {
    test_reused_err_does_not_leak_the_earlier_error();
    test_double_free_is_a_no_op();
    test_a_stale_pointer_never_frees_another_variables_error();
    test_foreign_and_garbage_pointers_are_only_overwritten();
    test_success_leaves_err_alone();
    return check_summary();
}
