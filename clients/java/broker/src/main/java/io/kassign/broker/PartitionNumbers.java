package io.kassign.broker;

import java.util.AbstractSet;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * One member's partitions of one topic as the coordinator receives them: an immutable set over a
 * sorted array of distinct numbers. Why not a HashSet: a large group's answer holds a million
 * partitions, and boxing each into a hash set cost more than reading the whole answer (Kafka's own
 * RangeAssignor hands over a set of its own, RangeSet, for the same reason). Equal to, and hashed
 * as, any other Set of the same Integers.
 */
final class PartitionNumbers extends AbstractSet<Integer> {
    private final int[] numbers;

    /** {@code numbers[0 .. size)}, which must be distinct; sorted here. */
    PartitionNumbers(final int[] numbers, final int size) {
        this.numbers = Arrays.copyOf(numbers, size);
        Arrays.sort(this.numbers);
    }

    /** Numbers as they are read, in a growing array, then {@link #build} once. */
    static final class Growing {
        private int[] values = new int[4];
        private int size;

        void add(final int p) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = p;
        }

        int size() {
            return size;
        }

        /** The set: one partition (a range group's usual member and topic) as {@code Set.of}, which
         * costs one small object, not an array copy and a wrapper. */
        Set<Integer> build() {
            return size == 1 ? Set.of(values[0]) : new PartitionNumbers(values, size);
        }
    }

    @Override
    public int size() {
        return numbers.length;
    }

    @Override
    public boolean contains(final Object o) {
        return o instanceof Integer p && Arrays.binarySearch(numbers, p) >= 0;
    }

    @Override
    public Iterator<Integer> iterator() {
        return new Iterator<>() {
            private int next;

            @Override
            public boolean hasNext() {
                return next < numbers.length;
            }

            @Override
            public Integer next() {
                if (next >= numbers.length) {
                    throw new NoSuchElementException();
                }
                return numbers[next++];
            }
        };
    }

    @Override
    public int hashCode() {
        int sum = 0;
        for (final int p : numbers) {
            sum += p; // Integer.hashCode is the value: the same as AbstractSet's
        }
        return sum;
    }
}
