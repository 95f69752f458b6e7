package io.kassign.streams;

import static io.kassign.client.Check.equal;

import io.kassign.client.Pki;
import java.util.Map;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;

/** The plug-in half of TlsTest (it needs this package's test state). */
public final class TlsPluginCheck {
    private TlsPluginCheck() {
    }

    public static void assignOverMutualTls(final String target, final Pki pki) throws Exception {
        final KassignTaskAssignor assignor = PluginTest.assignor(Map.of("application.id", "tls-plugin",
                "kassign.target", target, "kassign.tls.ca.file", pki.ca().getPath(),
                "kassign.tls.client.cert", pki.leaderCert().getPath(), "kassign.tls.client.key", pki.leaderKey().getPath()));
        final FakeState.App app = PluginTest.sampleApp();
        equal(TaskAssignor.AssignmentError.NONE, TaskAssignmentUtils.validateTaskAssignment(app, assignor.assign(app)),
                "valid");
        equal(1.0, FallbackTest.metric("task-assignor", "tls-plugin", "", "assignments-total"), "the server's answer");
        equal(0.0, FallbackTest.metric("task-assignor", "tls-plugin", "", "fallbacks-total"), "no fallback");
    }
}
