package io.kassign.client;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Certificates made by openssl for one test run, as tests/server/test_tls.py makes them: a test
 * CA, a server certificate for 127.0.0.1 and localhost, a client ("leader") certificate signed by
 * the CA, and a "stranger" signed by another CA. EC P-256 keys, PKCS#8 PEM.
 */
public record Pki(File ca, File serverCert, File serverKey, File leaderCert, File leaderKey, File strangerCert,
                  File strangerKey) {

    public static Pki make(final Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        ca(dir, "test-ca");
        ca(dir, "other-ca");
        leaf(dir, "server", "test-ca", "subjectAltName=DNS:localhost,IP:127.0.0.1");
        leaf(dir, "leader", "test-ca", "extendedKeyUsage=clientAuth");
        leaf(dir, "stranger", "other-ca", "extendedKeyUsage=clientAuth");
        return new Pki(file(dir, "test-ca.pem"), file(dir, "server.pem"), file(dir, "server.key"),
                file(dir, "leader.pem"), file(dir, "leader.key"), file(dir, "stranger.pem"), file(dir, "stranger.key"));
    }

    private static File file(final Path dir, final String name) {
        return dir.resolve(name).toFile();
    }

    private static void ca(final Path dir, final String name) throws IOException, InterruptedException {
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", name + ".key", "-out", name + ".pem", "-days", "2", "-subj", "/CN=" + name);
    }

    private static void leaf(final Path dir, final String name, final String ca, final String extensions)
            throws IOException, InterruptedException {
        Files.writeString(dir.resolve(name + ".ext"), extensions + "\n");
        openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name);
        openssl(dir, "x509", "-req", "-in", name + ".csr", "-CA", ca + ".pem", "-CAkey", ca + ".key",
                "-CAcreateserial", "-out", name + ".pem", "-days", "2", "-extfile", name + ".ext");
    }

    private static void openssl(final Path dir, final String... args) throws IOException, InterruptedException {
        final List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes());
        if (process.waitFor() != 0) {
            throw new IOException("openssl " + String.join(" ", args) + " failed: " + output);
        }
    }
}
