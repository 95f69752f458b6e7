package io.kassign.client;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Status;
import io.kassign.v1.AssignRequest;
import io.kassign.v1.AssignResponse;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Plays the group leader from the JVM side: reads an AssignRequest in protobuf JSON, asks the
 * service, and prints each client's active and standby tasks and follow-up deadline, or the whole
 * AssignResponse as protobuf JSON. An operator's check that a deployment answers, and answers what
 * they expect.
 *
 * <pre>
 * leader-simulator [--target HOST:PORT] [--json] [--deadline-ms N] [--attempts N]
 *                  [--tls] [--ca-file PEM] [--client-cert PEM --client-key PEM] FILE|-
 * </pre>
 * Exit status: 0 answered, 1 the call failed, 2 bad usage or input (a request the service refuses included).
 */
public final class LeaderSimulator {
    static final String USAGE = "usage: leader-simulator [--target HOST:PORT] [--json] [--deadline-ms N] "
            + "[--attempts N] [--tls] [--ca-file PEM] [--client-cert PEM --client-key PEM] FILE|-";

    private LeaderSimulator() {
    }

    public static void main(final String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** The program without System.exit, for tests. */
    static int run(final String[] args, final PrintStream out, final PrintStream err) {
        if (args.length == 1 && (args[0].equals("-h") || args[0].equals("--help"))) {
            out.println(USAGE);
            return 0;
        }
        final Options options;
        final AssignRequest request;
        try {
            options = Options.parse(args);
            request = ProtoJson.parseRequest(read(options.input));
        } catch (final IllegalArgumentException e) {
            err.println("leader-simulator: " + e.getMessage());
            err.println(USAGE);
            return 2;
        } catch (final InvalidProtocolBufferException e) {
            err.println("leader-simulator: not an AssignRequest in protobuf JSON: " + e.getMessage());
            return 2;
        } catch (final IOException e) {
            err.println("leader-simulator: cannot read " + options(args) + ": " + e.getMessage());
            return 2;
        }
        try (KassignClient client = options.client()) {
            final AssignResponse response = client.assign(request);
            out.print(options.json ? ProtoJson.print(response) + "\n" : AssignmentTable.render(response));
            out.flush();
            return 0;
        } catch (final KassignException e) {
            err.println("leader-simulator: " + e.getMessage());
            // as `kassign call`: 2 for a request the service refuses, 1 for anything else
            return e.code() == Status.Code.INVALID_ARGUMENT ? 2 : 1;
        }
    }

    private static String options(final String[] args) {
        return args.length == 0 ? "input" : args[args.length - 1];
    }

    private static String read(final String input) throws IOException {
        if (input.equals("-")) {
            return new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        }
        return Files.readString(Path.of(input), StandardCharsets.UTF_8);
    }

    /** Command-line options; every flag but the input has a default. */
    private static final class Options {
        String target = "localhost:50051";
        boolean json;
        long deadlineMs = 10_000;
        int attempts = 4;
        boolean tls;
        String caFile;
        String clientCert;
        String clientKey;
        String input;

        static Options parse(final String[] args) {
            final Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                final String arg = args[i];
                switch (arg) {
                    case "--target" -> o.target = value(args, ++i, arg);
                    case "--json" -> o.json = true;
                    case "--deadline-ms" -> o.deadlineMs = number(value(args, ++i, arg), arg);
                    case "--attempts" -> o.attempts = (int) number(value(args, ++i, arg), arg);
                    case "--tls" -> o.tls = true;
                    case "--ca-file" -> {
                        o.caFile = value(args, ++i, arg);
                        o.tls = true;
                    }
                    case "--client-cert" -> {
                        o.clientCert = value(args, ++i, arg);
                        o.tls = true;
                    }
                    case "--client-key" -> {
                        o.clientKey = value(args, ++i, arg);
                        o.tls = true;
                    }
                    default -> {
                        if (arg.startsWith("--") || o.input != null) {
                            throw new IllegalArgumentException("unexpected argument " + arg);
                        }
                        o.input = arg;
                    }
                }
            }
            if (o.input == null) {
                throw new IllegalArgumentException("missing FILE (or - for standard input)");
            }
            if ((o.clientCert == null) != (o.clientKey == null)) {
                throw new IllegalArgumentException("--client-cert and --client-key go together");
            }
            return o;
        }

        KassignClient client() {
            return KassignClient.builder(target)
                    .deadline(Duration.ofMillis(deadlineMs))
                    .maxAttempts(attempts)
                    .transport(tls, caFile, clientCert, clientKey)
                    .build();
        }

        private static String value(final String[] args, final int i, final String flag) {
            if (i >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            return args[i];
        }

        private static long number(final String text, final String flag) {
            try {
                final long value = Long.parseLong(text);
                if (value < 1) {
                    throw new IllegalArgumentException(flag + " must be positive, got " + text);
                }
                return value;
            } catch (final NumberFormatException e) {
                throw new IllegalArgumentException(flag + " needs a number, got " + text, e);
            }
        }
    }
}
