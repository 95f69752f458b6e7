package io.kassign.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The answer's compact partition sets behave as any other Set of the same Integers, as the coordinator reads them. */
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
    }
}
