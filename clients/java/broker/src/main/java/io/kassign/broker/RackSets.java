package io.kassign.broker;

import io.kassign.plugin.IndexedTable;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Each partition's replica rack set (as the describer gives it, a new {@code HashSet} per call) as
 * its index in the request's replica rack lists, the sets numbered as {@link IndexedTable} numbers
 * them, in the order first seen, so the request's bytes are the same.
 *
 * <p>Why not the table alone: hashing a {@code Set} walks it, and the lookup's {@code equals} walks
 * it again with a lookup per rack, at each of 50,000 to a million partitions; half of building the
 * request at 50,000 partitions. Here a set is walked once, each rack found by name among the few
 * there are and the set keyed by its racks' bits; beyond 64 distinct racks a set goes to the table
 * by value, as before.
 */
final class RackSets {
    private final IndexedTable<Set<String>> table;
    private final Map<String, Integer> bits = new HashMap<>();
    private final Map<Long, Integer> byBits = new HashMap<>();

    /** {@code table} numbers the distinct sets and adds each to the request when new. */
    RackSets(final IndexedTable<Set<String>> table) {
        this.table = table;
    }

    /** The set's index in the table, adding it first when new. */
    int indexOf(final Set<String> racks) {
        long key = 0L;
        for (final String rack : racks) {
            Integer bit = bits.get(rack);
            if (bit == null) {
                if (bits.size() == Long.SIZE) {
                    return table.indexOf(racks);
                }
                bit = bits.size();
                bits.put(rack, bit);
            }
            key |= 1L << bit;
        }
        final Integer known = byBits.get(key);
        if (known != null) {
            return known;
        }
        final int index = table.indexOf(racks);
        byBits.put(key, index);
        return index;
    }
}
