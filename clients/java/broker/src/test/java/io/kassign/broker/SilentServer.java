package io.kassign.broker;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A kassign that is stuck: a TCP server on loopback that accepts every connection and never sends
 * a byte of HTTP/2 back, so a call waits until a deadline ends it. Also {@link #closedPort()}, a
 * loopback port nothing listens on: a kassign that is down.
 */
final class SilentServer implements AutoCloseable {
    private final ServerSocket socket;
    private final List<Socket> accepted = new ArrayList<>();

    SilentServer() throws IOException {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    final Socket connection = socket.accept();
                    synchronized (accepted) {
                        accepted.add(connection);
                    }
                }
            } catch (final IOException e) {
                // closed
            }
        }, "silent-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String target() {
        return "127.0.0.1:" + socket.getLocalPort();
    }

    /** A loopback port that was free a moment ago and has nothing listening. */
    static int closedPort() throws IOException {
        try (ServerSocket closed = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return closed.getLocalPort();
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
        synchronized (accepted) {
            for (final Socket connection : accepted) {
                connection.close();
            }
        }
    }
}
