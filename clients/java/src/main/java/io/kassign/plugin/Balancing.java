package io.kassign.plugin;

import static io.kassign.plugin.ConfigValues.text;

import io.kassign.v1.AssignmentReport;
import io.kassign.v1.Balance;
import io.kassign.v1.ConsumerAssignmentReport;
import io.kassign.v1.LoadFigures;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.config.ConfigException;

/**
 * What the service is asked to balance (issue 25), for all four plug-ins: {@code kassign.balance}
 * = {@code count} (Kafka's way, the default) or {@code load}; {@code kassign.consumer.balance}
 * for the two consumer plug-ins and {@code kassign.streams.balance} for the two Streams ones win
 * over it (a broker's one server.properties configures both kinds, as a consumer's
 * {@code kassign.consumer.assignor} names its assignor). The plug-ins send no loads: with LOAD
 * the service takes each partition's load from its own {@code --load-source} (one query, cached
 * for every group), so the figures are the same whichever plug-in or client asks.
 */
public final class Balancing {
    /** Read by every plug-in, when its kind's key below is unset. */
    public static final String KEY = "kassign.balance";
    /** The consumer plug-ins' own (classic and broker-side). */
    public static final String CONSUMER_KEY = "kassign.consumer.balance";
    /** The Streams plug-ins' own (KIP-924 and broker-side). */
    public static final String STREAMS_KEY = "kassign.streams.balance";
    /** The service's consumer assignors that spread partitions by rule and refuse LOAD (options.balance). */
    public static final List<String> COUNT_ONLY_CONSUMER_ASSIGNORS = List.of("range", "roundrobin");

    private Balancing() {
    }

    /**
     * The first of {@code keys} that is set, read as count or load (any case); COUNT when none is.
     *
     * @throws ConfigException naming the key, for any other value
     */
    static Balance from(final Map<String, ?> configs, final String... keys) {
        for (final String key : keys) {
            final Optional<String> value = text(configs, key);
            if (value.isPresent()) {
                return switch (value.get().toLowerCase(Locale.ROOT)) {
                    case "count" -> Balance.BALANCE_COUNT;
                    case "load" -> Balance.BALANCE_LOAD;
                    default -> throw new ConfigException(key, value.get(), "must be count or load");
                };
            }
        }
        return Balance.BALANCE_COUNT;
    }

    /**
     * A Streams plug-in's balance: {@code kassign.streams.balance}, else {@code kassign.balance}.
     *
     * @throws ConfigException naming the key, for a value other than count or load
     */
    public static Balance forStreams(final Map<String, ?> configs) {
        return from(configs, STREAMS_KEY, KEY);
    }

    /**
     * A consumer plug-in's balance: {@code kassign.consumer.balance}, else {@code kassign.balance};
     * refused at configure() time with an assignor the service would refuse it for (range and
     * roundrobin: every call would fail and fall back).
     *
     * @throws ConfigException naming the key, for a value other than count or load, or LOAD with those
     */
    public static Balance forConsumers(final Map<String, ?> configs, final String assignorKey, final String assignor) {
        final Balance balance = from(configs, CONSUMER_KEY, KEY);
        if (balance == Balance.BALANCE_LOAD && COUNT_ONLY_CONSUMER_ASSIGNORS.contains(assignor)) {
            final String key = text(configs, CONSUMER_KEY).isPresent() ? CONSUMER_KEY : KEY;
            throw new ConfigException(key, text(configs, key).orElse("load"), "the service's " + assignor
                    + " assignor (" + assignorKey + ") balances by count only; load needs rack-optimal, sticky or "
                    + "cooperative-sticky");
        }
        return balance;
    }

    /**
     * The value to send: COUNT as unset (the field's zero, which the service reads as COUNT), so a
     * count request is byte for byte what it was before issue 25; LOAD as itself.
     */
    public static Balance wire(final Balance balance) {
        return balance == Balance.BALANCE_LOAD ? Balance.BALANCE_LOAD : Balance.BALANCE_UNSPECIFIED;
    }

    /** {@link #describe(Balance, Optional, List)} of a consumer group's report. */
    public static String describe(final Balance asked, final ConsumerAssignmentReport report) {
        return describe(asked, report.hasLoad() ? Optional.of(report.getLoad()) : Optional.empty(),
                report.getNotesList());
    }

    /** {@link #describe(Balance, Optional, List)} of a Streams group's report. */
    public static String describe(final Balance asked, final AssignmentReport report) {
        return describe(asked, report.hasLoad() ? Optional.of(report.getLoad()) : Optional.empty(),
                report.getNotesList());
    }

    /**
     * What the INFO line adds after a LOAD call: the report's figures and where the loads came
     * from ("; load peak 120 / bound 118 (x1.017), mean 100, from prometheus"), or why there are
     * none. Empty for COUNT, so those lines are unchanged.
     */
    public static String describe(final Balance asked, final Optional<LoadFigures> load, final List<String> notes) {
        if (asked != Balance.BALANCE_LOAD) {
            return "";
        }
        if (load.isEmpty()) {
            return "; load asked for, but the answer has no load figures (the service or its assignor does not "
                    + "balance load)";
        }
        final LoadFigures figures = load.get();
        if (figures.getSource().isEmpty()) {
            return "; load asked for, no loads found: balanced by count" + (notes.isEmpty() ? ""
                    : " (" + String.join("; ", notes) + ")");
        }
        final String ratio = figures.getBound() > 0 ? " (x" + round(figures.getPeak() / figures.getBound()) + ")" : "";
        return "; load peak " + round(figures.getPeak()) + " / bound " + round(figures.getBound()) + ratio + ", mean "
                + round(figures.getMean()) + ", from " + figures.getSource();
    }

    /** Four significant digits, no exponent: figures are rates or bytes, read by people. */
    static String round(final double value) {
        if (!Double.isFinite(value)) {
            return Double.toString(value);
        }
        return new BigDecimal(value).round(new MathContext(4)).stripTrailingZeros().toPlainString();
    }
}
