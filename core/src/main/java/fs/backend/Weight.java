package fs.backend;

import fs.tensor.DType;

/** A weight made usable by one {@link Backend}: [rows, columns] in its stored dtype (rank 1 has one row). */
public interface Weight {
    String name();

    DType dtype();

    long rows();

    long columns();
}
