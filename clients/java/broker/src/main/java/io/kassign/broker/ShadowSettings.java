package io.kassign.broker;

import static io.kassign.plugin.ConfigValues.text;

import java.util.HashMap;
import java.util.Map;

/**
 * The broker configuration a shadow-only plug-in ({@link KassignShadowConsumerGroupAssignor},
 * {@link KassignShadowStreamsTaskAssignor}) hands the plug-in it wraps: its kind's mode key set to
 * shadow, and its group id key (the metrics' client-id) given a "-shadow" of its own, so the
 * shadow instance's metrics stay apart from the assigning one's on the same broker.
 */
final class ShadowSettings {
    private ShadowSettings() {
    }

    /** {@code configs} with {@code modeKey=shadow} and {@code groupKey} = its value (or default) + "-shadow". */
    static Map<String, Object> of(final Map<String, ?> configs, final String modeKey, final String groupKey,
                                  final String defaultGroupPrefix) {
        final Map<String, Object> shadow = new HashMap<>(configs);
        final String node = text(configs, "node.id").or(() -> text(configs, "broker.id")).orElse("?");
        shadow.put(modeKey, "shadow");
        shadow.put(groupKey, text(configs, groupKey).orElse(defaultGroupPrefix + node) + "-shadow");
        return shadow;
    }
}
