package io.kassign.client;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.client.Check.raises;

import io.grpc.Status;
import io.kassign.v1.AssignResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** TLS and mutual TLS from the JVM against a real {@code kassign serve --tls-cert/--tls-key/--tls-client-ca}. */
final class TlsTest {
    private static Pki pki;
    private static LiveServer tls;
    private static LiveServer mtls;

    @BeforeAll
    static void start() throws Exception {
        pki = Pki.make(Path.of(System.getProperty("kassign.test.dir", "target/test-work"), "pki-" + ProcessHandle.current().pid()));
        tls = LiveServer.start(List.of("--tls-cert", pki.serverCert().getPath(), "--tls-key", pki.serverKey().getPath()));
        mtls = LiveServer.start(List.of("--tls-cert", pki.serverCert().getPath(), "--tls-key", pki.serverKey().getPath(),
                "--tls-client-ca", pki.ca().getPath()));
    }

    @AfterAll
    static void stop() {
        if (tls != null) {
            tls.close();
        }
        if (mtls != null) {
            mtls.close();
        }
    }

    private static KassignClient.Builder client(final LiveServer server) {
        return KassignClient.builder(server.target()).deadline(Duration.ofSeconds(10)).maxAttempts(1);
    }

    @Test
    @DisplayName("TLS: answers a client trusting the test CA; refuses the JVM's default trust and plaintext")
    void tls() {
        try (KassignClient client = client(tls).tls(pki.ca()).build()) {
            final AssignResponse response = client.assign(ClientTest.smallRequest());
            equal(2, response.getClientsCount(), "answered over TLS");
        }
        try (KassignClient untrusting = client(tls).tls().build()) {
            equal(Status.Code.UNAVAILABLE, raises(KassignException.class,
                    () -> untrusting.assign(ClientTest.smallRequest())).code(), "the test CA is not the JVM's");
        }
        try (KassignClient plaintext = client(tls).build()) {
            raises(KassignException.class, () -> plaintext.assign(ClientTest.smallRequest()));
        }
    }

    @Test
    @DisplayName("mutual TLS: the CA's client certificate gets through; none, or another CA's, does not")
    void mutualTls() {
        try (KassignClient leader = client(mtls).tls(pki.ca())
                .clientCertificate(pki.leaderCert(), pki.leaderKey()).build()) {
            equal(2, leader.assign(ClientTest.smallRequest()).getClientsCount(), "answered over mutual TLS");
        }
        try (KassignClient anonymous = client(mtls).tls(pki.ca()).build()) {
            final KassignException e = raises(KassignException.class, () -> anonymous.assign(ClientTest.smallRequest()));
            isTrue(e.code() == Status.Code.UNAVAILABLE || e.code() == Status.Code.UNKNOWN, "refused: " + e.code());
        }
        try (KassignClient stranger = client(mtls).tls(pki.ca())
                .clientCertificate(pki.strangerCert(), pki.strangerKey()).build()) {
            raises(KassignException.class, () -> stranger.assign(ClientTest.smallRequest()));
        }
    }

    /** The plug-in with kassign.tls.* keys: assigned by the server, no fallback. */
    @Test
    @DisplayName("the plug-in over mutual TLS (kassign.tls.ca.file, kassign.tls.client.cert/key)")
    void pluginOverMutualTls() throws Exception {
        io.kassign.streams.TlsPluginCheck.assignOverMutualTls(mtls.target(), pki);
    }

    /** Where the servers' certificates are, for other tests. */
    static Pki pki() {
        return pki;
    }
}
