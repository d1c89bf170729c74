import KVSupport

/// One stored value of a vector index: up to a block's capacity of vectors, in id order,
/// packed so that a scan computes distances over the bytes in place.
///
/// The layout (version 1), all integers varints:
///
///     01  count  dimensions  idBytes
///     count × (id length, id)            the ids, tuple-encoded, ascending
///     count × dimensions × 4 bytes       the vectors, float32 little-endian, in id order
///     count × 4 bytes                    each vector's norm, float32 (rounded up)
///
/// `idBytes` is the length of the ids' part, so that the vectors are found without reading
/// the ids.
///
/// A list of an index with a quantized ``VectorStorage`` holds blocks of layout version 2:
/// `02 count dimensions idBytes storage` (storage 1 float16, 2 int8, 3 bit), then the parts
/// of version 1, then `count × codeBytes` of codes (``VectorCodes``) and `count × 12` bytes
/// of each vector's scale, ‖x̂‖ and ‖x − x̂‖ (float32, the last two rounded up).
package struct VectorBlock {
    /// One vector and the id (tuple-encoded) of its document.
    package struct Entry: Equatable {
        package var id: [UInt8]
        package var values: [Float]

        package init(id: [UInt8], values: [Float]) {
            self.id = id
            self.values = values
        }
    }

    static let version: UInt8 = 1
    static let codedVersion: UInt8 = 2

    static func storageCode(_ storage: VectorStorage) -> UInt8 {
        switch storage {
        case .float32: 0
        case .float16: 1
        case .int8: 2
        case .bit: 3
        }
    }

    /// The bytes of a block of `entries` (ascending ids, each of `dimensions` values): layout
    /// 1 for float32, 2 (with codes) for a quantized storage.
    package static func encode(
        _ entries: some Collection<Entry>, dimensions: Int, storage: VectorStorage = .float32
    ) -> [UInt8] {
        var ids: [UInt8] = []
        for e in entries {
            Varint.append(e.id.count, to: &ids)
            ids.append(contentsOf: e.id)
        }
        var out: [UInt8] = [storage == .float32 ? version : codedVersion]
        Varint.append(entries.count, to: &out)
        Varint.append(dimensions, to: &out)
        Varint.append(ids.count, to: &out)
        if storage != .float32 { out.append(storageCode(storage)) }
        out.reserveCapacity(out.count + ids.count + entries.count * (dimensions + 1) * 4)
        out.append(contentsOf: ids)
        for e in entries {
            e.values.withUnsafeBytes { out.append(contentsOf: $0) }
        }
        for e in entries {
            let norm = e.values.withUnsafeBufferPointer { VectorKernel.storedNorm($0) }
            withUnsafeBytes(of: norm.bitPattern.littleEndian) { out.append(contentsOf: $0) }
        }
        guard storage != .float32 else { return out }
        let codes = entries.map { VectorCodes.encode($0.values, storage) }
        for c in codes { out.append(contentsOf: c.code) }
        for c in codes {
            for f in [c.scale, c.codedNorm, c.error] {
                withUnsafeBytes(of: f.bitPattern.littleEndian) { out.append(contentsOf: $0) }
            }
        }
        return out
    }

    /// A block's bytes, read in place.
    package struct View {
        package let bytes: UnsafeRawBufferPointer
        package let count: Int
        package let dimensions: Int
        /// Where the ids start, and where the vectors do.
        let idsStart: Int
        let vectorsStart: Int
        let normsStart: Int
        /// The codes' storage: float32 for a block of layout 1 (which has none).
        package let storage: VectorStorage
        let codeBytes: Int
        let codesStart: Int
        let auxStart: Int

        /// - Throws: `.corruption` (without a location: the caller names the key) for bytes
        ///   that are not a block of vectors of `dimensions` values.
        package init(_ bytes: UnsafeRawBufferPointer, dimensions expected: Int) throws {
            func damaged(_ what: String) -> KVDocsError { KVDocsError(.corruption, "a damaged vector block: \(what)") }
            guard bytes.first == VectorBlock.version || bytes.first == VectorBlock.codedVersion else {
                throw damaged("unknown layout version")
            }
            var i = 1
            let count = try Varint.read(bytes, &i)
            let dimensions = try Varint.read(bytes, &i)
            let idBytes = try Varint.read(bytes, &i)
            var storage = VectorStorage.float32
            if bytes.first == VectorBlock.codedVersion {
                guard i < bytes.count,
                    let s = VectorStorage.allCases.first(where: { VectorBlock.storageCode($0) == bytes[i] }),
                    s != .float32
                else { throw damaged("unknown code storage") }
                storage = s
                i += 1
            }
            let codeBytes = storage == .float32 ? 0 : VectorCodes.codeBytes(storage, dimensions: dimensions)
            guard dimensions == expected else {
                throw damaged("it holds vectors of \(dimensions) values, the index \(expected)")
            }
            guard count > 0, count <= 1 << 20, idBytes >= count, idBytes <= bytes.count else {
                throw damaged("its counts are out of range")
            }
            let vectorsStart = i + idBytes
            let perVector = (dimensions + 1) * 4 + (storage == .float32 ? 0 : codeBytes + 12)
            let (size, overflow) = count.multipliedReportingOverflow(by: perVector)
            guard !overflow, vectorsStart + size == bytes.count else { throw damaged("its length is wrong") }
            self.bytes = bytes
            self.count = count
            self.dimensions = dimensions
            self.idsStart = i
            self.vectorsStart = vectorsStart
            self.normsStart = vectorsStart + count * dimensions * 4
            self.storage = storage
            self.codeBytes = codeBytes
            self.codesStart = normsStart + count * 4
            self.auxStart = codesStart + count * codeBytes
        }

        /// The code of the vector in `slot`, in place (a block of layout 2).
        @inline(__always)
        package func code(_ slot: Int) -> UnsafeRawPointer {
            bytes.baseAddress.unsafelyUnwrapped + codesStart + slot * codeBytes
        }

        /// The scale, ‖x̂‖ and ‖x − x̂‖ of the code in `slot` (a block of layout 2).
        @inline(__always)
        package func codeBounds(_ slot: Int) -> (scale: Float, codedNorm: Float, error: Float) {
            func float(_ k: Int) -> Float {
                Float(
                    bitPattern: UInt32(
                        littleEndian: bytes.loadUnaligned(fromByteOffset: auxStart + slot * 12 + k * 4, as: UInt32.self)
                    ))
            }
            return (float(0), float(1), float(2))
        }

        /// The float32 values of the vector in `slot`, in place.
        @inline(__always)
        package func vector(_ slot: Int) -> UnsafeRawPointer {
            // A block was checked to hold `count` vectors.
            bytes.baseAddress.unsafelyUnwrapped + vectorsStart + slot * dimensions * 4
        }

        /// The stored norm of the vector in `slot`.
        @inline(__always)
        package func norm(_ slot: Int) -> Float {
            Float(
                bitPattern: UInt32(
                    littleEndian: bytes.loadUnaligned(fromByteOffset: normsStart + slot * 4, as: UInt32.self)))
        }

        /// Calls `body` with each id in order, with its slot, until it returns false.
        /// - Throws: `.corruption` for a damaged id list.
        package func forEachID(_ body: (Int, UnsafeRawBufferPointer) throws -> Bool) throws {
            var i = idsStart
            for slot in 0..<count {
                let length = try Varint.read(bytes, &i)
                guard length > 0, i + length <= vectorsStart else {
                    throw KVDocsError(.corruption, "a damaged vector block: its id list is damaged")
                }
                guard try body(slot, UnsafeRawBufferPointer(rebasing: bytes[i..<(i + length)])) else { return }
                i += length
            }
            guard i == vectorsStart else {
                throw KVDocsError(.corruption, "a damaged vector block: its id list has the wrong length")
            }
        }

        /// The id in `slot`.
        package func id(_ slot: Int) throws -> [UInt8] {
            var found: [UInt8] = []
            try forEachID { s, id in
                if s == slot { found = Array(id) }
                return s < slot
            }
            return found
        }

        /// Every entry, in order.
        /// - Throws: `.corruption` for a damaged id list or ids out of order.
        package func entries() throws -> [Entry] {
            var entries: [Entry] = []
            entries.reserveCapacity(count)
            try forEachID { slot, id in
                let p = vector(slot)
                var values = [Float](repeating: 0, count: dimensions)
                values.withUnsafeMutableBytes {
                    $0.copyMemory(from: UnsafeRawBufferPointer(start: p, count: dimensions * 4))
                }
                if let last = entries.last, compareBytes(last.id, Array(id)) >= 0 {
                    throw KVDocsError(.corruption, "a damaged vector block: its ids are not ascending")
                }
                entries.append(Entry(id: Array(id), values: values))
                return true
            }
            return entries
        }
    }
}
