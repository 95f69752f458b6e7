package io.kassign.plugin;

import io.kassign.client.KassignException;

/**
 * Why a rebalance was assigned locally rather than by the kassign service: the {@code cause} tag
 * of the {@code fallbacks-total} metric, and the start of the WARN line's cause. Shared by the
 * Kafka Streams and the consumer plug-ins.
 */
public enum FallbackCause {
    /** The service could not be reached, after the retries. */
    UNAVAILABLE,
    /** {@code kassign.deadline.ms} passed before an answer came, or before it was converted ({@link Deadline}). */
    DEADLINE_EXCEEDED,
    /** The service answered with another gRPC error status (INVALID_ARGUMENT, INTERNAL, ...). */
    ERROR_STATUS,
    /** The service answered with something Kafka would reject (an AssignmentError, unknown tasks...). */
    INVALID_ANSWER,
    /** A class or method missing at run time (a jar built for another Kafka, a classpath clash). */
    LINKAGE_ERROR,
    /** Any other Error thrown while asking the service. */
    ERROR,
    /** Any other exception while asking the service (reading the state, converting it...). */
    EXCEPTION;

    public static FallbackCause of(final Throwable failure) {
        if (failure instanceof KassignException e) {
            return switch (e.code()) {
                case UNAVAILABLE -> UNAVAILABLE;
                case DEADLINE_EXCEEDED -> DEADLINE_EXCEEDED;
                default -> ERROR_STATUS;
            };
        }
        if (failure instanceof InvalidAnswer) {
            return INVALID_ANSWER;
        }
        if (failure instanceof Deadline.Passed) {
            return DEADLINE_EXCEEDED;
        }
        if (failure instanceof LinkageError) {
            return LINKAGE_ERROR;
        }
        return failure instanceof Error ? ERROR : EXCEPTION;
    }

    /** The cause as the WARN line shows it: the gRPC status, or the failure's class and message. */
    public static String describe(final Throwable failure) {
        if (failure instanceof KassignException e) {
            return e.status() + " (after " + e.attempts() + " attempt" + (e.attempts() == 1 ? "" : "s") + ")";
        }
        if (failure instanceof InvalidAnswer) {
            return "invalid answer: " + failure.getMessage();
        }
        if (failure instanceof Deadline.Passed) {
            return "DEADLINE_EXCEEDED: " + failure.getMessage();
        }
        return failure.toString();
    }
}
