package io.kassign.plugin;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Distinct values a request sends once, in a table, and refers to by index (issue 24: members'
 * topic lists, partitions' replica rack lists): the first time a value is seen it is added to the
 * table through {@code add} and gets the next index. Keys must not change once given.
 */
public final class IndexedTable<K> {
    private final Map<K, Integer> index = new HashMap<>();
    private final Consumer<K> add;

    public IndexedTable(final Consumer<K> add) {
        this.add = add;
    }

    /** The value's index in the table, adding it first when new. */
    public int indexOf(final K value) {
        final Integer known = index.get(value);
        if (known != null) {
            return known;
        }
        final int next = index.size();
        index.put(value, next);
        add.accept(value);
        return next;
    }
}
