package fs.generate;

import fs.FsException;

/**
 * Thrown by {@link Scheduler#submit} when every slot is busy and the waiting queue is at its limit: the caller should
 * try again later (an HTTP server answers 503 with Retry-After).
 */
public final class QueueFullException extends FsException {
    QueueFullException(int slots, int queueLimit) {
        super("the scheduler is full: " + slots + (slots == 1 ? " slot" : " slots") + " busy and " + queueLimit
                + (queueLimit == 1 ? " request" : " requests") + " waiting; try again later");
    }
}
