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

    /**
     * A member answered without the partition runs a compact request asks for: the answer of a
     * service older than the compact wire, which reads the members as subscribed to nothing.
     */
    public static InvalidAnswer withoutRuns(final String memberId) {
        return new InvalidAnswer("the service answered member " + memberId + " without partition runs: it"
                + " predates the compact wire this plug-in sends (issue 24) and read its members as subscribed"
                + " to nothing; upgrade the service");
    }
}
