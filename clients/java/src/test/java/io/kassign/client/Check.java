package io.kassign.client;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.function.Executable;

/** Assertions in the words the tests were first written with, on top of JUnit 5's. */
public final class Check {
    private Check() {
    }

    public static void equal(final Object expected, final Object actual, final String what) {
        Assertions.assertEquals(expected, actual, what);
    }

    public static void isTrue(final boolean condition, final String what) {
        Assertions.assertTrue(condition, what);
    }

    public static <T extends Throwable> T raises(final Class<T> type, final Executable body) {
        return Assertions.assertThrows(type, body);
    }
}
