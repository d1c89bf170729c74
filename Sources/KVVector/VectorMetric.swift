/// How a vector index measures distance. Smaller is nearer for every metric.
///
/// - ``l2``: the Euclidean distance, `sqrt(Σ (aᵢ − bᵢ)²)` (sqlite-vec's `vec_distance_l2`).
/// - ``cosine``: `1 − a·b / (|a| |b|)`, from 0 (same direction) to 2 (opposite). A zero
///   vector has no direction: its cosine distance to any vector (a zero one too) is 1, as if
///   orthogonal, so it is neither near nor far and is never an error.
/// - ``dot``: the negated inner product, `−a·b` (the largest inner product is the nearest).
///
/// Distances are computed exactly, in double precision, from the stored float32 values:
/// the values a document gives are rounded to float32 when they are stored, and that
/// rounding is the only one.
public enum VectorMetric: String, Sendable, Hashable, CaseIterable {
    /// `1 − cos(a, b)`; 1 with a zero vector.
    case cosine
    /// The Euclidean distance.
    case l2
    /// The negated inner product.
    case dot
}

/// How a vector index stores its vectors.
///
/// Only `float32` is built so far: each value is an IEEE 754 binary32, little-endian, packed
/// many vectors to a stored value. The quantized forms the schema names (`float16`, `int8`,
/// `bit`) are refused with a clear error until they are built.
public enum VectorStorage: String, Sendable, Hashable, CaseIterable {
    /// IEEE 754 binary32 values, four bytes each.
    case float32
}
