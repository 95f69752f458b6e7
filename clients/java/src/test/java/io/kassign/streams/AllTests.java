package io.kassign.streams;

import io.kassign.client.Check;
import io.kassign.client.ClientTests;

/**
 * Entry point of the Java tests (run by tests/java/test_java_client.py):
 * {@code AllTests [--target HOST:PORT] [--only SUBSTRING]}; with --target, the checks that need a
 * real kassign server run too. Exit status 1 when any check failed.
 */
public final class AllTests {
    private AllTests() {
    }

    public static void main(final String[] args) {
        String target = null;
        String only = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--target" -> target = args[++i];
                case "--only" -> only = args[++i];
                default -> {
                    System.err.println("usage: AllTests [--target HOST:PORT] [--only SUBSTRING]");
                    System.exit(2);
                }
            }
        }
        final Check check = new Check();
        ClientTests.register(check, target);
        PluginTests.register(check, target);
        System.exit(check.run(only) == 0 ? 0 : 1);
    }
}
