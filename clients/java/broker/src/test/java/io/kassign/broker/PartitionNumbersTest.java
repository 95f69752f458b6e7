package io.kassign.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The answer's compact partition sets (sorted arrays, ranges) behave as any other Set of the same Integers, as the coordinator reads them. */
class PartitionNumbersTest {
    private final PartitionNumbers numbers = new PartitionNumbers(new int[] {7, 0, 3, 99, -1}, 4);

    @Test
    void equalToAndHashedAsAHashSetOfTheSameNumbersOnly() {
        assertEquals(Set.of(0, 3, 7, 99), numbers);
        assertEquals(numbers, Set.of(0, 3, 7, 99));
        assertEquals(Set.of(0, 3, 7, 99).hashCode(), numbers.hashCode());
        assertFalse(numbers.equals(Set.of(0, 3, 7)), "a set lacking one");
        assertEquals(Set.of(), new PartitionNumbers(new int[0], 0));
    }

    @Test
    void containsAndIteratesItsOwnNumbersInOrder() {
        assertTrue(numbers.contains(99));
        assertFalse(numbers.contains(-1), "past the size given");
        assertFalse(numbers.contains(5));
        assertFalse(numbers.contains("3"));
        assertEquals(List.of(0, 3, 7, 99), new ArrayList<>(numbers));
        final Iterator<Integer> each = new PartitionNumbers(new int[] {4}, 1).iterator();
        assertEquals(4, each.next());
        assertThrows(NoSuchElementException.class, each::next);
    }

    @Test
    void cannotBeChanged() {
        assertThrows(UnsupportedOperationException.class, () -> numbers.add(5));
        assertThrows(UnsupportedOperationException.class, () -> numbers.iterator().remove());
        assertThrows(UnsupportedOperationException.class, () -> new PartitionRange(2, 5).add(5));
    }

    /** Consecutive numbers (a range answer's) are one range object; others a sorted array, equal either way. */
    @Test
    void consecutiveNumbersAreARange() {
        final Set<Integer> range = PartitionNumbers.of(new int[] {1999, 1997, 1998, 42}, 3);
        assertInstanceOf(PartitionRange.class, range);
        assertEquals(Set.of(1997, 1998, 1999), range);
        assertEquals(range, Set.of(1997, 1998, 1999));
        assertEquals(Set.of(1997, 1998, 1999).hashCode(), range.hashCode());
        assertEquals(List.of(1997, 1998, 1999), new ArrayList<>(range));
        assertInstanceOf(PartitionRange.class, PartitionNumbers.of(new int[] {300}, 1));
        assertEquals(Set.of(300), PartitionNumbers.of(new int[] {300}, 1));
        assertEquals(Set.of(), PartitionNumbers.of(new int[0], 0));
        final Set<Integer> gap = PartitionNumbers.of(new int[] {5, 3, 9}, 2);
        assertInstanceOf(PartitionNumbers.class, gap);
        assertEquals(Set.of(3, 5), gap);
    }

    @Test
    void aRangeContainsAndIteratesItsOwnNumbersOnly() {
        final PartitionRange range = new PartitionRange(4, 7);
        assertEquals(3, range.size());
        assertTrue(range.contains(4) && range.contains(6));
        assertFalse(range.contains(3) || range.contains(7) || range.contains("5"));
        final Iterator<Integer> each = new PartitionRange(8, 9).iterator();
        assertEquals(8, each.next());
        assertThrows(NoSuchElementException.class, each::next);
        assertTrue(new PartitionRange(3, 3).isEmpty());
        assertThrows(IllegalArgumentException.class, () -> new PartitionRange(3, 2));
        final int big = Integer.MAX_VALUE - 2; // the sum wraps as a HashSet's does
        assertEquals(Set.of(big, big + 1).hashCode(), new PartitionRange(big, big + 2).hashCode());
    }
}
