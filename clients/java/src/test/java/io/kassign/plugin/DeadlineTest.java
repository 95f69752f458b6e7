package io.kassign.plugin;

import static io.kassign.client.Check.equal;
import static io.kassign.client.Check.isTrue;
import static io.kassign.client.Check.raises;

import io.grpc.Status;
import io.kassign.client.KassignClient;
import io.kassign.client.KassignException;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.ConsumerAssignRequest;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The plug-ins' deadline over their whole assign(): its checks, its fallback cause, the call's bound. */
final class DeadlineTest {
    @Test
    @DisplayName("a deadline passes its checks until it is spent, then names the stage; cause DEADLINE_EXCEEDED")
    void checks() {
        final Deadline open = Deadline.after(Duration.ofSeconds(60), System.nanoTime());
        open.check("while building the request");
        isTrue(open.remaining().toMillis() > 59_000, "time left: " + open.remaining());
        final Deadline spent = Deadline.after(Duration.ofMillis(5), System.nanoTime() - 10_000_000L);
        isTrue(spent.remaining().isNegative(), "none left");
        final Deadline.Passed passed = raises(Deadline.Passed.class, () -> spent.check("while checking the answer"));
        equal(FallbackCause.DEADLINE_EXCEEDED, FallbackCause.of(passed), "the metric's cause");
        equal("DEADLINE_EXCEEDED: kassign.deadline.ms (5 ms) passed while checking the answer",
                FallbackCause.describe(passed), "the WARN line's cause");
    }

    @Test
    @DisplayName("a call given no time left fails at once with DEADLINE_EXCEEDED, no attempt made")
    void callWithoutTimeLeft() {
        try (KassignClient client = KassignClient.builder("127.0.0.1:1").build()) {
            for (final Runnable call : new Runnable[] {
                () -> client.assign(AssignRequest.getDefaultInstance(), Duration.ZERO),
                () -> client.assignConsumers(ConsumerAssignRequest.getDefaultInstance(), Duration.ofMillis(-3))}) {
                final KassignException e = raises(KassignException.class, call::run);
                equal(Status.Code.DEADLINE_EXCEEDED, e.code(), "status");
                equal(0, e.attempts(), "attempts");
            }
        }
    }
}
