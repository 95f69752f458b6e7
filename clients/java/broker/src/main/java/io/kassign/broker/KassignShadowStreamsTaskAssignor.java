package io.kassign.broker;

import io.kassign.plugin.Mode;
import java.util.Map;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;

/**
 * {@link KassignStreamsTaskAssignor} always in shadow mode, under its own name
 * {@code kassign-shadow} (issue 26): listed beside it in {@code group.streams.assignors}, one
 * streams group tries shadow mode with the group config {@code streams.assignor.name=kassign-shadow}
 * while the others keep theirs. Every other key is the broker's; its metrics' client-id is
 * {@code kassign.streams.group.id} (default {@code streams@broker-NODE}) with {@code -shadow}.
 */
public final class KassignShadowStreamsTaskAssignor implements TaskAssignor, Configurable {
    /** The name groups select it by (group config streams.assignor.name). */
    public static final String NAME = "kassign-shadow";

    private final KassignStreamsTaskAssignor plugin = new KassignStreamsTaskAssignor();

    @Override
    public void configure(final Map<String, ?> configs) {
        plugin.configure(ShadowSettings.of(configs, Mode.STREAMS_KEY, StreamsSettings.GROUP_ID, "streams@broker-"));
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String toString() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(final GroupSpec group, final TopologyDescriber describer) {
        return plugin.assign(group, describer);
    }
}
