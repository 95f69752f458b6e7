package io.kassign.broker;

import io.kassign.plugin.Mode;
import java.util.Map;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

/**
 * {@link KassignConsumerGroupAssignor} always in shadow mode, under its own name
 * {@code kassign-shadow} (issue 26): listed beside it in {@code group.consumer.assignors}, it lets
 * one group try shadow mode with {@code group.remote.assignor=kassign-shadow} while the others keep
 * theirs, without a broker restart per change of mind (a consumer picks its assignor when it
 * joins). Every other key is the broker's, as for the plug-in it wraps; its metrics' client-id is
 * {@code kassign.consumer.group.id} (default {@code consumer@broker-NODE}) with {@code -shadow}.
 */
public final class KassignShadowConsumerGroupAssignor implements ConsumerGroupPartitionAssignor, Configurable,
        AutoCloseable {
    /** The name members select it by ({@code group.remote.assignor}). */
    public static final String NAME = "kassign-shadow";

    private final KassignConsumerGroupAssignor plugin = new KassignConsumerGroupAssignor();

    @Override
    public void configure(final Map<String, ?> configs) {
        plugin.configure(ShadowSettings.of(configs, Mode.CONSUMER_KEY, ConsumerGroupSettings.GROUP_ID, "consumer@broker-"));
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(final GroupSpec group, final SubscribedTopicDescriber describer)
            throws PartitionAssignorException {
        return plugin.assign(group, describer);
    }

    @Override
    public void close() {
        plugin.close();
    }
}
