package io.kassign.client;

import io.grpc.Status;

/**
 * A call to the kassign service failed: the gRPC status it ended with and how many attempts were
 * made. Unchecked, because a caller in the middle of a rebalance has one sensible reaction (fall
 * back) and no use for a checked exception's ceremony.
 */
public final class KassignException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Status.Code code;
    private final String status;
    private final int attempts;

    KassignException(final Status status, final int attempts, final Throwable cause) {
        super("kassign call failed after " + attempts + " attempt(s): " + status.getCode()
                + (status.getDescription() == null ? "" : ": " + status.getDescription()), cause);
        this.code = status.getCode();
        this.status = status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription());
        this.attempts = attempts;
    }

    /** The gRPC status code of the last attempt (UNAVAILABLE after retries ran out, DEADLINE_EXCEEDED, ...). */
    public Status.Code code() {
        return code;
    }

    /** The last attempt's status as text: its code, then its description if any ("UNAVAILABLE: io exception"). */
    public String status() {
        return status;
    }

    /** Attempts made, the first included. */
    public int attempts() {
        return attempts;
    }
}
