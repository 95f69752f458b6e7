package io.kassign.consumer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;

/**
 * The rebalance protocol this consumer will use, computed as Kafka's ConsumerCoordinator computes
 * it: the protocols every assignor of {@code partition.assignment.strategy} supports, the highest
 * of them.
 *
 * <p>Why the plug-in needs it: under COOPERATIVE a partition may change owner only after its owner
 * revoked it, so the service must withhold it for a round; under EAGER every member has revoked
 * everything before joining. The assignor is never told which one the coordinator chose, but it
 * sees the same configuration (configure() gets the consumer's configs), so it computes the same.
 * An assignor class that cannot be loaded or made here is assumed to support both protocols: the
 * others then decide, and the coordinator itself would fail on that class anyway.
 */
final class RebalanceProtocols {
    private RebalanceProtocols() {
    }

    /** The protocol for {@code strategies} (a list or comma-separated names, or classes), {@code self} among them. */
    static RebalanceProtocol chosen(final Object strategies, final ConsumerPartitionAssignor self) {
        final Set<RebalanceProtocol> common = EnumSet.copyOf(self.supportedProtocols());
        for (final Object entry : entries(strategies)) {
            common.retainAll(supported(entry, self));
        }
        if (common.isEmpty()) {
            // Kafka's coordinator refuses such a configuration before any rebalance; be safe anyway.
            return RebalanceProtocol.EAGER;
        }
        return common.contains(RebalanceProtocol.COOPERATIVE) ? RebalanceProtocol.COOPERATIVE : RebalanceProtocol.EAGER;
    }

    private static List<Object> entries(final Object strategies) {
        if (strategies == null) {
            return List.of();
        }
        if (strategies instanceof Collection<?> list) {
            return new ArrayList<>(list);
        }
        if (strategies instanceof String text) {
            return Arrays.stream(text.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                    .map(s -> (Object) s).toList();
        }
        return List.of(strategies);
    }

    private static Collection<RebalanceProtocol> supported(final Object entry, final ConsumerPartitionAssignor self) {
        final String name = entry instanceof Class<?> c ? c.getName() : String.valueOf(entry).trim();
        if (name.equals(self.getClass().getName())) {
            return self.supportedProtocols();
        }
        try {
            final Class<?> type = entry instanceof Class<?> c ? c : Class.forName(name, false, loader());
            final Object made = type.getDeclaredConstructor().newInstance();
            if (made instanceof ConsumerPartitionAssignor assignor) {
                return assignor.supportedProtocols();
            }
        } catch (final ReflectiveOperationException | LinkageError | RuntimeException e) {
            // unknown: see the class comment
        }
        return EnumSet.allOf(RebalanceProtocol.class);
    }

    private static ClassLoader loader() {
        final ClassLoader context = Thread.currentThread().getContextClassLoader();
        return context != null ? context : RebalanceProtocols.class.getClassLoader();
    }
}
