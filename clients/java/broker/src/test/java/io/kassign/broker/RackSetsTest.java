package io.kassign.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kassign.plugin.IndexedTable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** RackSets numbers rack sets exactly as the table alone would: same indices, same sets added in order. */
class RackSetsTest {
    /** Sets over {@code racks} distinct racks, repeated, in a mixed order, some empty. */
    private static List<Set<String>> sets(final int racks) {
        final List<Set<String>> sets = new ArrayList<>();
        for (int p = 0; p < 4 * racks; p++) {
            final Set<String> set = new HashSet<>(); // new each time, as the describer's
            if (p % 7 != 3) {
                set.add("rack-" + (p * 5 % racks));
                set.add("rack-" + ((p * 5 + 1 + p % 3) % racks));
            }
            sets.add(set);
        }
        return sets;
    }

    private static void sameAsTheTable(final List<Set<String>> sets) {
        final List<Set<String>> addedAlone = new ArrayList<>();
        final IndexedTable<Set<String>> alone = new IndexedTable<>(addedAlone::add);
        final List<Set<String>> added = new ArrayList<>();
        final RackSets racks = new RackSets(new IndexedTable<>(added::add));
        final List<Integer> expected = new ArrayList<>();
        final List<Integer> indices = new ArrayList<>();
        for (final Set<String> set : sets) {
            expected.add(alone.indexOf(set));
            indices.add(racks.indexOf(new HashSet<>(set)));
        }
        assertEquals(expected, indices);
        assertEquals(addedAlone, added);
    }

    @Test
    void aFewRacksAreNumberedAsTheTableNumbersThem() {
        sameAsTheTable(sets(3));
    }

    @Test
    void beyondSixtyFourRacksSetsStillGetTheTablesIndices() {
        final List<Set<String>> sets = sets(150);
        sets.addAll(sets(3)); // sets of the first racks again, after the bits ran out
        sameAsTheTable(sets);
    }
}
