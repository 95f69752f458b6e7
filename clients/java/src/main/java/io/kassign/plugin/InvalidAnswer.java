package io.kassign.plugin;

/**
 * The service answered, but with something Kafka would reject (an error it reported, an unknown
 * member, a partition given twice...): a plug-in falls back rather than hand it to Kafka.
 */
public class InvalidAnswer extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public InvalidAnswer(final String message) {
        super(message);
    }
}
