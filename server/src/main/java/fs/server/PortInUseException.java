package fs.server;

import fs.FsException;

/** Thrown by {@link ApiServer#start} when another program already listens on the port asked for. */
public final class PortInUseException extends FsException {
    PortInUseException(String host, int port, Throwable cause) {
        super("cannot listen on " + host + ":" + port + ": the port is in use by another program", cause);
    }
}
