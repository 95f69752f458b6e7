package io.kassign.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code kassign serve} on loopback, started by the tests themselves from the repository's
 * venv (system property {@code kassign.bin}, set by the pom: {@code ../../.venv/bin/kassign}).
 * {@link #shared()} is one plaintext server for the whole test JVM, stopped at exit; each server
 * journals its requests ({@code --journal}, {@link #journalLines}: the shadow mode tests read
 * what a plug-in sent there). The broker
 * plug-ins' tests use it too, through this module's tests jar (their pom sets {@code kassign.bin}).
 */
public final class LiveServer implements AutoCloseable {
    private static LiveServer shared;

    private final Process process;
    private final String target;
    private final Path log;
    private final Path journal;

    private LiveServer(final Process process, final String target, final Path log, final Path journal) {
        this.process = process;
        this.target = target;
        this.log = log;
        this.journal = journal;
    }

    /** The plaintext server every test of this JVM shares. */
    public static synchronized LiveServer shared() {
        if (shared == null) {
            shared = start(List.of());
            final LiveServer server = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        }
        return shared;
    }

    /** A new server with extra {@code kassign serve} arguments (--tls-cert ...); close it after. */
    public static LiveServer start(final List<String> extraArgs) {
        try {
            final Path dir = Files.createDirectories(Path.of(System.getProperty("kassign.test.dir", "target/test-work")));
            final Path portFile = Files.createTempFile(dir, "kassign-port", ".txt");
            Files.delete(portFile);
            final Path log = Files.createTempFile(dir, "kassign-serve", ".log");
            final Path journal = Files.createTempDirectory(dir, "kassign-journal");
            final List<String> command = new ArrayList<>(List.of(System.getProperty("kassign.bin", "../../.venv/bin/kassign"),
                    "serve", "--host", "127.0.0.1", "--port", "0", "--port-file", portFile.toString(),
                    "--workers", "1", "--metrics-port", "-1", "--journal", journal.toString()));
            command.addAll(extraArgs);
            final Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                if (Files.exists(portFile)) {
                    final String port = Files.readString(portFile, StandardCharsets.UTF_8).trim();
                    if (!port.isEmpty()) {
                        return new LiveServer(process, "127.0.0.1:" + port, log, journal);
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

    public String target() {
        return target;
    }

    /**
     * The journal's lines so far, Streams requests ({@code consumer} false) or consumer groups'
     * ({@code DIR/consumer}), in the order written (one worker, one file at a time).
     */
    public List<String> journalLines(final boolean consumer) {
        final Path folder = consumer ? journal.resolve("consumer") : journal;
        if (!Files.isDirectory(folder)) {
            return List.of();
        }
        try (var files = Files.list(folder)) {
            final List<String> lines = new ArrayList<>();
            for (final Path file : files.filter(f -> f.getFileName().toString().endsWith(".jsonl")).sorted().toList()) {
                lines.addAll(Files.readAllLines(file, StandardCharsets.UTF_8));
            }
            return lines;
        } catch (final IOException e) {
            throw new IllegalStateException("cannot read the journal " + folder, e);
        }
    }

    /** The server's log so far (for failure messages). */
    public String log() {
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
