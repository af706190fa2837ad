//! Proof DAGs: why a derived fact holds, down to stored evidence, with citation tags.
