package io.kassign.plugin;

import io.kassign.v1.ShadowComparison;
import io.kassign.v1.ShadowFigures;

/**
 * Shadow mode's INFO line (issue 26), from the service's {@code report.shadow}: each figure as
 * Kafka's answer's, then kassign's ("cross-rack 12->3"), so a reader sees what kassign would have
 * changed; then what the rebalance itself waited ({@link Path}). A server older than the contract answers without the comparison; the line says so
 * rather than print zeros.
 */
public final class ShadowLine {
    private ShadowLine() {
    }

    /**
     * What the rebalance waited for on the plug-in's path in shadow mode: all of {@code assign()}
     * up to handing the call over, and of that Kafka's own assignor, so a reader (and the e2e
     * test) sees that shadow mode adds no wait.
     */
    public record Path(long waitedMs, long kafkaMs) {
        /** From {@link System#nanoTime} readings: assign()'s start, where Kafka's assignor began, and its end. */
        public static Path of(final long startedNanos, final long kafkaDoneNanos) {
            return new Path((System.nanoTime() - startedNanos) / 1_000_000L, (kafkaDoneNanos - startedNanos) / 1_000_000L);
        }

        @Override
        public String toString() {
            return "; the rebalance waited " + waitedMs + " ms, " + kafkaMs + " of them Kafka's assignor";
        }
    }

    /**
     * "group G: Kafka's X against kassign's Y: cross-rack 12->3, moved 4->6, ...; 3 members differ (45 ms)".
     *
     * @param streams whether standby figures apply (the Streams plug-ins)
     */
    public static String describe(final String group, final String kafkaAssignor, final String kassignAssignor,
                                  final boolean hasComparison, final ShadowComparison comparison,
                                  final boolean streams, final long elapsedMs, final Path path) {
        final StringBuilder line = new StringBuilder("group ").append(group).append(": Kafka's ").append(kafkaAssignor)
                .append(" against kassign's ").append(kassignAssignor.isEmpty() ? "(default)" : kassignAssignor);
        if (!hasComparison) {
            return line.append(": the service's report has no shadow comparison (a server older than shadow mode "
                    + "leaves report.shadow empty); its answer was not compared (").append(elapsedMs).append(" ms)")
                    .append(path).toString();
        }
        final ShadowFigures kafka = comparison.getKafka();
        final ShadowFigures kassign = comparison.getKassign();
        line.append(": cross-rack ").append(kafka.getCrossRackPartitions()).append("->")
                .append(kassign.getCrossRackPartitions())
                .append(", moved ").append(kafka.getMoved()).append("->").append(kassign.getMoved());
        if (streams) {
            line.append(", standbys moved ").append(kafka.getStandbysMoved()).append("->")
                    .append(kassign.getStandbysMoved());
        }
        line.append(", per member max/min ").append(kafka.getMaxPerMember()).append('/').append(kafka.getMinPerMember())
                .append("->").append(kassign.getMaxPerMember()).append('/').append(kassign.getMinPerMember());
        if (kafka.hasMaxLoad() && kassign.hasMaxLoad()) {
            line.append(", max load ").append(Balancing.round(kafka.getMaxLoad())).append("->")
                    .append(Balancing.round(kassign.getMaxLoad()));
        }
        if (streams) {
            line.append(", standbys sharing rack or tag ").append(kafka.getStandbysSharingRackOrTag()).append("->")
                    .append(kassign.getStandbysSharingRackOrTag());
        }
        line.append("; ").append(comparison.getSame() ? "the same answer"
                : comparison.getDifferingMembers() + (streams ? " clients" : " members") + " differ");
        return line.append(" (").append(elapsedMs).append(" ms)").append(path).toString();
    }
}
