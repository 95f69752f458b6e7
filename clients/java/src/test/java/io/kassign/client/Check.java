package io.kassign.client;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A tiny test runner: named checks, each run in isolation, a line per outcome, exit status 1 when
 * any failed. (No JUnit jar is installed with Debian's Java packages here.)
 */
public final class Check {
    /** A test body that may throw anything. */
    @FunctionalInterface
    public interface Body {
        void run() throws Exception;
    }

    private record Case(String name, Body body) {
    }

    private final List<Case> cases = new ArrayList<>();

    public Check add(final String name, final Body body) {
        cases.add(new Case(name, body));
        return this;
    }

    /** Runs every case (or those whose name contains {@code filter}); returns the number failed. */
    public int run(final String filter) {
        int failed = 0;
        int ran = 0;
        for (final Case c : cases) {
            if (filter != null && !c.name.contains(filter)) {
                continue;
            }
            ran++;
            final long start = System.nanoTime();
            try {
                c.body.run();
                System.out.printf("ok   %s (%d ms)%n", c.name, (System.nanoTime() - start) / 1_000_000);
            } catch (final Throwable t) {
                failed++;
                System.out.printf("FAIL %s: %s%n", c.name, t);
                t.printStackTrace(System.out);
            }
        }
        System.out.printf("%d passed, %d failed%n", ran - failed, failed);
        if (ran == 0) {
            System.out.println("no test matched " + filter);
            return 1;
        }
        return failed;
    }

    public static void equal(final Object expected, final Object actual, final String what) {
        if (!Objects.equals(expected, actual)) {
            throw new AssertionError(what + ": expected <" + expected + "> but was <" + actual + ">");
        }
    }

    public static void isTrue(final boolean condition, final String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    /** Runs {@code body}, which must throw {@code type}; returns the exception. */
    public static <T extends Throwable> T raises(final Class<T> type, final Body body) {
        try {
            body.run();
        } catch (final Throwable t) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
            throw new AssertionError("expected " + type.getSimpleName() + " but got " + t, t);
        }
        throw new AssertionError("expected " + type.getSimpleName() + " but nothing was thrown");
    }
}
