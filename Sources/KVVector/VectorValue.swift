import KVSupport

/// Reading a vector out of a document's JSON: exactly `dimensions` finite numbers, each
/// representable as a float32.
public enum VectorValue {
    /// The most dimensions an index may declare.
    public static let maximumDimensions = 8192

    /// Why a JSON value is not a vector of a given length.
    public struct Problem: Error, Equatable, Sendable {
        /// What is wrong, for a message that names the document and the field before it.
        public let reason: String
    }

    /// The float32 values of `value`, a JSON array of exactly `dimensions` numbers.
    /// - Returns: `.failure` saying what is wrong: not an array, the wrong length, an element
    ///   that is not a number (a string, an array, `null`), a NaN or an infinity, or a number
    ///   beyond float32's range.
    public static func parse(_ value: JSONValue, dimensions: Int) -> Result<[Float], Problem> {
        guard case .array(let elements) = value else {
            return .failure(Problem(reason: "a \(value.typeName), not an array of \(dimensions) numbers"))
        }
        guard elements.count == dimensions else {
            return .failure(
                Problem(reason: "an array of \(elements.count) elements, not \(dimensions) (the index's dimensions)"))
        }
        // Read through the array's buffer: no copy of each element (a copy of a JSONValue
        // retains and releases; this loop runs for every number of every vector written).
        var bad: Int?
        let floats = [Float](unsafeUninitializedCapacity: dimensions) { out, initialized in
            elements.withUnsafeBufferPointer { values in
                for i in 0..<dimensions {
                    let d: Double
                    switch values[i] {
                    case .double(let v): d = v
                    case .int(let v): d = Double(v)
                    case .uint(let v): d = Double(v)
                    default: d = .nan
                    }
                    let f = Float(d)
                    guard d.isFinite, f.isFinite else {
                        bad = i
                        break
                    }
                    out[i] = f
                    initialized = i + 1
                }
            }
        }
        guard let bad else { return .success(floats) }
        let element = elements[bad]
        switch element {
        case .int, .uint, .double:
            let d: Double
            switch element {
            case .int(let v): d = Double(v)
            case .uint(let v): d = Double(v)
            case .double(let v): d = v
            default: d = .nan
            }
            guard d.isFinite else {
                return .failure(Problem(reason: "element \(bad) is \(d), not a finite number"))
            }
            return .failure(Problem(reason: "element \(bad), \(d), is beyond float32's range (±3.4e38)"))
        default:
            return .failure(Problem(reason: "element \(bad) is a \(element.typeName), not a number"))
        }
    }

}
