package io.kassign.streams;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.AssignmentError;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;

/**
 * The assignment when kassign cannot be used: Kafka's own public KIP-924 {@link StickyTaskAssignor},
 * so failover happens as if kassign did not exist (a client that left has its tasks moved, a new
 * client gets some), then a follow-up rebalance on every client after the back-off, when kassign
 * is asked again. Should even the sticky assignor fail, every client keeps its previous tasks
 * ({@link PreviousAssignment}): a plug-in never fails a rebalance.
 */
final class LocalFallback {
    /** Which of the two local assignments was used. */
    enum Kind { STICKY, PREVIOUS }

    record Result(TaskAssignment assignment, Kind kind, Throwable stickyFailure) {
    }

    private LocalFallback() {
    }

    static Result assign(final ApplicationState state, final Instant followup) {
        try {
            final TaskAssignment sticky = new StickyTaskAssignor().assign(state);
            final AssignmentError error = TaskAssignmentUtils.validateTaskAssignment(state, sticky);
            if (error != AssignmentError.NONE) {
                throw new IllegalStateException("StickyTaskAssignor's assignment is invalid: " + error);
            }
            return new Result(withFollowup(sticky, followup), Kind.STICKY, null);
        } catch (final Exception | LinkageError e) {
            return new Result(PreviousAssignment.keep(state, followup), Kind.PREVIOUS, e);
        }
    }

    /**
     * Shadow mode's answer (issue 26): StickyTaskAssignor's as it is, with no follow-up rebalance
     * (the group is meant to stay on it), which Kafka validates as it would its own; only should it
     * throw, {@link #assign}'s second choice, with the follow-up at {@code followup}.
     */
    static Result shadow(final ApplicationState state, final Instant followup) {
        try {
            return new Result(new StickyTaskAssignor().assign(state), Kind.STICKY, null);
        } catch (final Exception | LinkageError e) {
            return new Result(PreviousAssignment.keep(state, followup), Kind.PREVIOUS, e);
        }
    }

    /** Every client gets a follow-up at {@code followup}, or keeps the earlier one it has. */
    static TaskAssignment withFollowup(final TaskAssignment assignment, final Instant followup) {
        final List<KafkaStreamsAssignment> result = new ArrayList<>();
        for (final KafkaStreamsAssignment client : assignment.assignment()) {
            final Instant due = client.followupRebalanceDeadline()
                    .filter(earlier -> earlier.isBefore(followup))
                    .orElse(followup);
            result.add(client.withFollowupRebalance(due));
        }
        return new TaskAssignment(result);
    }
}
