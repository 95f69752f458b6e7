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
 * as, any other Set of the same Integers. Consecutive numbers are a {@link PartitionRange} instead
 * ({@link #of}).
 */
final class PartitionNumbers extends AbstractSet<Integer> {
    private final int[] numbers;

    /** {@code numbers[0 .. size)}, which must be distinct; copied, then sorted. */
    PartitionNumbers(final int[] numbers, final int size) {
        this(Arrays.copyOf(numbers, size));
        Arrays.sort(this.numbers);
    }

    /** Kept as it is: {@code sorted} must be sorted and distinct. */
    private PartitionNumbers(final int[] sorted) {
        this.numbers = sorted;
    }

    /**
     * The set of {@code numbers[0 .. size)}, which must be distinct and are sorted in place (the
     * array is the caller's to give away: kept, not copied, when {@code size} is its length). Why
     * a range when they are consecutive: one object, where a range answer has a million sets.
     */
    static Set<Integer> of(final int[] numbers, final int size) {
        Arrays.sort(numbers, 0, size);
        if (size == 0 || numbers[size - 1] - numbers[0] == size - 1) { // distinct and sorted: consecutive
            return size == 0 ? new PartitionRange(0, 0) : new PartitionRange(numbers[0], numbers[size - 1] + 1);
        }
        return new PartitionNumbers(size == numbers.length ? numbers : Arrays.copyOf(numbers, size));
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

        /** The set ({@link #of}); the numbers are given away, nothing may be added after. */
        Set<Integer> build() {
            return of(values, size);
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
