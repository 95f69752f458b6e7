package io.kassign.testlog;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * An SLF4J binding for the tests: records every event at INFO and above (and prints it, to the
 * Surefire output file), so a test can check the exact lines the plug-in logs.
 */
public final class CapturingProvider implements SLF4JServiceProvider {
    /** One logged line. */
    public record Event(String logger, Level level, String message) {
    }

    private static final List<Event> EVENTS = new ArrayList<>();
    private final ConcurrentMap<String, Logger> loggers = new ConcurrentHashMap<>();
    private final ILoggerFactory factory = name -> loggers.computeIfAbsent(name, Capturing::new);
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();

    /** Events logged since the last {@link #clear()}, in order. */
    public static List<Event> events() {
        synchronized (EVENTS) {
            return List.copyOf(EVENTS);
        }
    }

    public static void clear() {
        synchronized (EVENTS) {
            EVENTS.clear();
        }
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return factory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
    }

    /**
     * INFO and above unless system property {@code kassign.testlog.level} is WARN or ERROR: the
     * plug-in bench quiets both sides' INFO lines (Kafka's sticky assignors log a whole assignment).
     */
    private static final int THRESHOLD = Level.valueOf(System.getProperty("kassign.testlog.level", "INFO")).toInt();

    private static final class Capturing extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;

        Capturing(final String name) {
            this.name = name;
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(final Level level, final Marker marker, final String pattern,
                                                   final Object[] arguments, final Throwable throwable) {
            final String message = MessageFormatter.basicArrayFormat(pattern, arguments);
            System.out.println(level + " " + name + " - " + message + (throwable == null ? "" : " " + throwable));
            synchronized (EVENTS) {
                EVENTS.add(new Event(name, level, message));
            }
        }

        @Override
        public boolean isTraceEnabled() {
            return false;
        }

        @Override
        public boolean isDebugEnabled() {
            return false;
        }

        @Override
        public boolean isInfoEnabled() {
            return Level.INFO.toInt() >= THRESHOLD;
        }

        @Override
        public boolean isWarnEnabled() {
            return Level.WARN.toInt() >= THRESHOLD;
        }

        @Override
        public boolean isErrorEnabled() {
            return true;
        }
    }
}
