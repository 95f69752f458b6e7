package io.kassign.broker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code kassign serve} on loopback for the broker plug-ins' tests, started from the
 * repository's venv (system property {@code kassign.bin}, set by the pom). {@link #shared()} is one
 * server for the whole test JVM, stopped at exit.
 */
final class KassignServe implements AutoCloseable {
    private static KassignServe shared;

    private final Process process;
    private final String target;
    private final Path log;

    private KassignServe(final Process process, final String target, final Path log) {
        this.process = process;
        this.target = target;
        this.log = log;
    }

    static synchronized KassignServe shared() {
        if (shared == null) {
            shared = start();
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close));
        }
        return shared;
    }

    static KassignServe start() {
        try {
            final Path dir = Files.createDirectories(Path.of(System.getProperty("kassign.test.dir", "target/test-work")));
            final Path portFile = Files.createTempFile(dir, "kassign-port", ".txt");
            Files.delete(portFile);
            final Path log = Files.createTempFile(dir, "kassign-serve", ".log");
            final Process process = new ProcessBuilder(List.of(System.getProperty("kassign.bin", "../../../.venv/bin/kassign"),
                    "serve", "--host", "127.0.0.1", "--port", "0", "--port-file", portFile.toString(),
                    "--workers", "1", "--metrics-port", "-1"))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                if (Files.exists(portFile)) {
                    final String port = Files.readString(portFile, StandardCharsets.UTF_8).trim();
                    if (!port.isEmpty()) {
                        return new KassignServe(process, "127.0.0.1:" + port, log);
                    }
                }
                if (!process.isAlive()) {
                    throw new IllegalStateException("kassign serve exited: " + Files.readString(log));
                }
                Thread.sleep(50);
            }
            process.destroyForcibly();
            throw new IllegalStateException("kassign serve wrote no port within 60 s: " + Files.readString(log));
        } catch (final IOException e) {
            throw new IllegalStateException("cannot start kassign serve", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted starting kassign serve", e);
        }
    }

    String target() {
        return target;
    }

    /** The server's log so far (for failure messages). */
    String log() {
        try {
            return Files.readString(log);
        } catch (final IOException e) {
            return "(cannot read " + log + ": " + e + ")";
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (final InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
