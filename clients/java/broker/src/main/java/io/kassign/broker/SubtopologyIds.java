package io.kassign.broker;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * KIP-1071's subtopology ids (strings) as kassign's int32 {@code TaskId.subtopology}, and back.
 *
 * <p>Kafka Streams names its subtopologies "0", "1", ..., so when every id is a canonical
 * non-negative int32 it is sent as that number (the service's logs and journal then show the
 * ids Kafka shows). Otherwise each id is its index in sorted order: stable for one request, which
 * is all the service needs, since a request carries every member's tasks in the same numbering.
 */
final class SubtopologyIds {
    private static final Pattern CANONICAL = Pattern.compile("0|[1-9][0-9]{0,9}");

    private final List<String> names;
    private final Map<String, Integer> numbers;
    private final Map<Integer, String> byNumber;

    private SubtopologyIds(final List<String> names, final Map<String, Integer> numbers) {
        this.names = List.copyOf(names);
        this.numbers = Map.copyOf(numbers);
        final Map<Integer, String> back = new HashMap<>();
        numbers.forEach((name, number) -> back.put(number, name));
        this.byNumber = Map.copyOf(back);
    }

    /** The numbering of {@code subtopologies} (any order; duplicates count once). */
    static SubtopologyIds of(final Collection<String> subtopologies) {
        final List<String> sorted = new ArrayList<>(new TreeSet<>(subtopologies));
        final Map<String, Integer> numbers = new HashMap<>();
        final boolean numeric = sorted.stream().allMatch(SubtopologyIds::isCanonicalInt);
        for (int i = 0; i < sorted.size(); i++) {
            final String name = sorted.get(i);
            numbers.put(name, numeric ? Integer.parseInt(name) : i);
        }
        return new SubtopologyIds(sorted, numbers);
    }

    private static boolean isCanonicalInt(final String name) {
        if (!CANONICAL.matcher(name).matches()) {
            return false;
        }
        return Long.parseLong(name) <= Integer.MAX_VALUE;
    }

    /** The subtopology ids in sorted order. */
    List<String> names() {
        return names;
    }

    /** The number sent for {@code name}; null when the topology has no such subtopology. */
    Integer number(final String name) {
        return numbers.get(name);
    }

    /** The subtopology id of {@code number}; null when no subtopology was sent as it. */
    String name(final int number) {
        return byNumber.get(number);
    }
}
