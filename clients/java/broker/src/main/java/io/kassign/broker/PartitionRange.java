package io.kassign.broker;

import java.util.AbstractSet;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * Consecutive partitions {@code from .. to - 1} of one topic as one immutable object, no array and
 * no boxed number held. Why: a range answer gives each member one run of consecutive partitions
 * per topic (at a million partitions over 2,000 members, one partition per topic each: a million
 * sets), so the set's own cost is the conversion's; Kafka's server-side RangeAssignor hands over
 * a set of the same shape. Equal to, and hashed as, any other Set of the same Integers.
 */
final class PartitionRange extends AbstractSet<Integer> {
    private final int from;
    private final int to;

    /** {@code from <= to}; empty when equal. */
    PartitionRange(final int from, final int to) {
        if (to < from) {
            throw new IllegalArgumentException("range " + from + " to " + to);
        }
        this.from = from;
        this.to = to;
    }

    @Override
    public int size() {
        return to - from;
    }

    @Override
    public boolean contains(final Object o) {
        return o instanceof Integer p && p >= from && p < to;
    }

    @Override
    public Iterator<Integer> iterator() {
        return new Iterator<>() {
            private int next = from;

            @Override
            public boolean hasNext() {
                return next < to;
            }

            @Override
            public Integer next() {
                if (next >= to) {
                    throw new NoSuchElementException();
                }
                return next++;
            }
        };
    }

    @Override
    public int hashCode() {
        // the sum of the numbers (Integer.hashCode is the value), wrapped as AbstractSet's int sum is
        return (int) (((long) from + to - 1) * (to - from) / 2);
    }
}
