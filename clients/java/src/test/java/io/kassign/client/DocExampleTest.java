package io.kassign.client;

import static io.kassign.client.Check.equal;

import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import io.kassign.v1.ClientAssignment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** docs/java.md's client example, as written there, against a real server. */
final class DocExampleTest {
    @Test
    @DisplayName("docs/java.md's example prints each client's tasks as 0_0, never as an empty list")
    void docsExamplePrintsTasks() {
        final AssignRequest request = RequestBuilder.forGroup("orders-app")
                .numStandbyReplicas(1)
                .rackAwareAssignmentTags("zone")
                .task(TaskSpec.stateful(0, 0).stores("counts")
                        .source("orders", 0).changelog("orders-app-counts-changelog", 0)
                        .changelogEndOffsetSum(52_000))
                .task(TaskSpec.stateless(1, 0).source("clicks", 0))
                .client(ClientSpec.process("8a2b6c1e-0000-4000-8000-000000000001")
                        .threads(2).tag("zone", "eu-west-1a").endpoint("app-1:8080")
                        .runningActive(TaskIds.of(0, 0)))
                .client(ClientSpec.process("8a2b6c1e-0000-4000-8000-000000000002")
                        .threads(2).tag("zone", "eu-west-1b")
                        .offsetSum(TaskIds.of(0, 0), 51_000))
                .build();
        final List<String> lines = new ArrayList<>();
        try (KassignClient client = KassignClient.builder(LiveServer.shared().target())
                .deadline(Duration.ofSeconds(30))
                .maxAttempts(4)
                .build()) {
            final AssignResponse response = client.assign(request);
            for (ClientAssignment c : response.getClientsList()) {
                lines.add(c.getProcessId()
                        + " active " + c.getActiveTasksList().stream().map(TaskIds::format).toList()
                        + " standby " + c.getStandbyTasksList().stream().map(TaskIds::format).toList());
            }
        }
        equal(List.of(
                "8a2b6c1e-0000-4000-8000-000000000001 active [0_0] standby []",
                "8a2b6c1e-0000-4000-8000-000000000002 active [1_0] standby [0_0]"), lines, "printed lines");
    }
}
