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

/// How a vector index stores the vectors of its lists, the copies an approximate search
/// scans (``VectorSearchMode``).
///
/// Every index keeps each vector as float32 (IEEE 754 binary32, little-endian) in its
/// id-ordered blocks, which exact searches and pre-filters read. With `float32` the lists
/// hold float32 copies too. With a quantized form the lists hold a smaller code of each
/// vector **and its float32 values**: a search computes each vector's lower bound from its
/// code and a stored bound of the quantization error (‖x − x̂‖), and exact distances from
/// the float32 values for the candidates it takes, in order of those bounds. So results and
/// distances are those of float32 within the lists read; the code saves the bytes a scan
/// reads, not the bytes stored (a list's vector takes its code beside its float32 values).
public enum VectorStorage: String, Sendable, Hashable, CaseIterable {
    /// Four bytes a value.
    case float32
    /// IEEE 754 binary16: two bytes a value.
    case float16
    /// A signed byte a value, times one scale per vector (the largest magnitude / 127).
    case int8
    /// One bit a value (its sign), times one scale per vector (the mean magnitude).
    case bit
}
