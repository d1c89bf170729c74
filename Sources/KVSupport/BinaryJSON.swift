/// The binary form documents and covering index entries are stored in (document store
/// format 4): reading one member of an object is a binary search over its offsets, not a
/// parse, and typed reads decode straight from the bytes (``BinaryJSONDecoder``).
///
/// A value is a tag byte followed by its payload; a stored value starts with ``marker``,
/// a byte that never starts JSON text (it is not valid UTF-8), so a reader tells the two
/// forms apart from the first byte and text written by earlier versions stays readable.
///
/// | tag | value | payload |
/// |---|---|---|
/// | 0, 1, 2 | `null`, `false`, `true` | none |
/// | 3, 4, 5, 6 | ``JSONValue/int(_:)`` | 1, 2, 4 or 8 bytes, two's complement, little-endian: the fewest that hold it |
/// | 7 | ``JSONValue/uint(_:)`` | 8 bytes, little-endian |
/// | 8 | ``JSONValue/double(_:)`` | the 8 bytes of its IEEE 754 bit pattern, little-endian |
/// | 9 | string | length in bytes (LEB128), then the UTF-8 bytes |
/// | 10 | array | count, body length (LEB128 both), then the elements |
/// | 11, 12, 13 | object, offsets of 1, 2 or 4 bytes | count, body length (LEB128 both), then one offset per member, then the members |
///
/// An object's members are in code-point order of their keys (``JSONObject``'s order,
/// which is bytewise order of their UTF-8), each one its key (length in LEB128, then UTF-8)
/// followed by its value; each offset is the member's distance from the first member, in
/// the fewest bytes that hold the largest. Every value round-trips exactly: integers keep
/// their case and value, doubles their bits (so `-0.0` stays negative).
///
/// Reading checks every length against the bytes, the member order, UTF-8 and the nesting
/// depth (``JSONValue/maximumDepth``): damaged bytes give an error, never a crash or a
/// wrong value.
package enum BinaryJSON {
    /// The first byte of a value in the binary form.
    package static let marker: UInt8 = 0xF5

    package enum Tag {
        static let null: UInt8 = 0, `false`: UInt8 = 1, `true`: UInt8 = 2
        static let int8: UInt8 = 3, int16: UInt8 = 4, int32: UInt8 = 5, int64: UInt8 = 6
        package static let uint64: UInt8 = 7, double: UInt8 = 8, string: UInt8 = 9, array: UInt8 = 10
        package static let object1: UInt8 = 11, object2: UInt8 = 12, object4: UInt8 = 13
    }

    /// Damaged bytes, as the typed decoder meets them: callers that know which document
    /// was read turn it into `.corruption` naming it.
    package struct Damage: Error {
        package let error: KVDocsError

        package init(error: KVDocsError) { self.error = error }
    }

    /// Whether `bytes` are in the binary form (else they are JSON text).
    package static func isBinary(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.first == marker
    }

    /// Whether `bytes` are in the binary form: the overload other modules' calls take, so
    /// that they do not run the generic one unspecialized.
    package static func isBinary(_ bytes: [UInt8]) -> Bool {
        bytes.first == marker
    }

    /// Whether bytes read in place are in the binary form.
    package static func isBinary(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.first == marker
    }

    // MARK: - Writing

    /// `value` in the binary form, starting with ``marker``.
    /// - Throws: `.invalidArgument` for a NaN or infinite number, or nesting deeper than
    ///   ``JSONValue/maximumDepth`` (as writing JSON text does).
    package static func encode(_ value: JSONValue) throws -> [UInt8] {
        var sizes: [Int] = []
        let size = try measure(value, depth: 0, sizes: &sizes)
        return [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, count in
            guard let base = buffer.baseAddress else { return }
            base[0] = marker
            var position = 1, slot = 0
            write(value, to: base, at: &position, sizes: sizes, slot: &slot)
            count = position
        }
    }

    /// The bytes `value` takes; appends, in pre-order, the size of each container's
    /// elements or members area to `sizes`.
    private static func measure(_ value: JSONValue, depth: Int, sizes: inout [Int]) throws -> Int {
        switch value {
        case .null, .bool: return 1
        case .int(let i): return 1 + intWidth(i)
        case .uint: return 9
        case .double(let d):
            guard d.isFinite else {
                throw KVDocsError(.invalidArgument, "value cannot be written as JSON: \(d) is not a finite number")
            }
            return 9
        case .string(let s):
            let n = s.utf8.count
            return 1 + varintSize(n) + n
        case .array(let elements):
            guard depth < JSONValue.maximumDepth else { throw tooDeep() }
            let slot = sizes.count
            sizes.append(0)
            var body = 0
            for element in elements { body += try measure(element, depth: depth + 1, sizes: &sizes) }
            sizes[slot] = body
            return 1 + varintSize(elements.count) + varintSize(body) + body
        case .object(let object):
            guard depth < JSONValue.maximumDepth else { throw tooDeep() }
            let slot = sizes.count
            sizes.append(0)
            var area = 0
            for member in object {
                let n = member.key.utf8.count
                area += varintSize(n) + n + (try measure(member.value, depth: depth + 1, sizes: &sizes))
            }
            sizes[slot] = area
            let body = object.count * offsetWidth(area) + area
            return 1 + varintSize(object.count) + varintSize(body) + body
        }
    }

    private static func write(
        _ value: JSONValue, to p: UnsafeMutablePointer<UInt8>, at i: inout Int, sizes: [Int], slot: inout Int
    ) {
        switch value {
        case .null:
            p[i] = Tag.null
            i += 1
        case .bool(let b):
            p[i] = b ? Tag.true : Tag.false
            i += 1
        case .int(let v):
            switch intWidth(v) {
            case 1: p[i] = Tag.int8
            case 2: p[i] = Tag.int16
            case 4: p[i] = Tag.int32
            default: p[i] = Tag.int64
            }
            i += 1
            writeFixed(UInt64(bitPattern: v), width: intWidth(v), to: p, at: &i)
        case .uint(let u):
            p[i] = Tag.uint64
            i += 1
            writeFixed(u, width: 8, to: p, at: &i)
        case .double(let d):
            p[i] = Tag.double
            i += 1
            writeFixed(d.bitPattern, width: 8, to: p, at: &i)
        case .string(let s):
            p[i] = Tag.string
            i += 1
            writeString(s, to: p, at: &i)
        case .array(let elements):
            let body = sizes[slot]
            slot += 1
            p[i] = Tag.array
            i += 1
            writeVarint(elements.count, to: p, at: &i)
            writeVarint(body, to: p, at: &i)
            for element in elements { write(element, to: p, at: &i, sizes: sizes, slot: &slot) }
        case .object(let object):
            let area = sizes[slot]
            slot += 1
            let width = offsetWidth(area)
            p[i] = width == 1 ? Tag.object1 : width == 2 ? Tag.object2 : Tag.object4
            i += 1
            writeVarint(object.count, to: p, at: &i)
            writeVarint(object.count * width + area, to: p, at: &i)
            var offset = i
            i += object.count * width
            let first = i
            for member in object {
                writeFixed(UInt64(i - first), width: width, to: p, at: &offset)
                writeString(member.key, to: p, at: &i)
                write(member.value, to: p, at: &i, sizes: sizes, slot: &slot)
            }
        }
    }

    private static func writeString(_ s: String, to p: UnsafeMutablePointer<UInt8>, at i: inout Int) {
        var s = s
        s.withUTF8 { utf8 in
            writeVarint(utf8.count, to: p, at: &i)
            if let source = utf8.baseAddress, utf8.count > 0 {
                (p + i).update(from: source, count: utf8.count)
            }
            i += utf8.count
        }
    }

    private static func writeFixed(_ v: UInt64, width: Int, to p: UnsafeMutablePointer<UInt8>, at i: inout Int) {
        var v = v
        for k in 0..<width {
            p[i + k] = UInt8(truncatingIfNeeded: v)
            v >>= 8
        }
        i += width
    }

    private static func writeVarint(_ n: Int, to p: UnsafeMutablePointer<UInt8>, at i: inout Int) {
        var n = UInt(n)
        while n >= 0x80 {
            p[i] = UInt8(truncatingIfNeeded: n) | 0x80
            n >>= 7
            i += 1
        }
        p[i] = UInt8(n)
        i += 1
    }

    static func varintSize(_ n: Int) -> Int {
        var n = UInt(n), size = 1
        while n >= 0x80 {
            n >>= 7
            size += 1
        }
        return size
    }

    static func intWidth(_ v: Int64) -> Int {
        if v >= -0x80 && v < 0x80 { return 1 }
        if v >= -0x8000 && v < 0x8000 { return 2 }
        if v >= -0x8000_0000 && v < 0x8000_0000 { return 4 }
        return 8
    }

    static func offsetWidth(_ area: Int) -> Int {
        area <= 0xFF ? 1 : area <= 0xFFFF ? 2 : 4
    }

    private static func tooDeep() -> KVDocsError {
        KVDocsError(
            .invalidArgument,
            "value cannot be written as JSON: arrays and objects nest deeper than \(JSONValue.maximumDepth) levels")
    }

    // MARK: - Reading

    /// The value `bytes` hold (starting with ``marker``).
    /// - Throws: `.decoding` naming the byte offset of the first problem.
    package static func decode(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        if let value = try bytes.withContiguousStorageIfAvailable({ try decode(buffer: $0) }) { return value }
        return try Array(bytes).withUnsafeBufferPointer { try decode(buffer: $0) }
    }

    /// The value of bytes in the binary form, read in place.
    /// - Throws: `.decoding` naming the byte offset where the bytes are damaged.
    /// - Parameter keys: member keys of values decoded before (the documents of one request
    ///   share most of theirs): a key whose bytes match the one read at the same position
    ///   of the previous decode is that string again, not a new one.
    package static func decode(buffer: UnsafeBufferPointer<UInt8>, keys: KeyCache? = nil) throws -> JSONValue {
        do {
            return try decodeValue(buffer, keys: keys)
        } catch let damage as Damage {
            throw damage.error
        }
    }

    /// Member keys by their position in a decode (the n-th key read), for the next decode
    /// of a value of the same shape (``decode(buffer:keys:)``). Used by one thread at a time.
    package final class KeyCache {
        /// The most keys remembered.
        static let capacity = 256
        fileprivate var keys: [String] = []

        package init() {}
    }

    private static func decodeValue(_ buffer: UnsafeBufferPointer<UInt8>, keys: KeyCache?) throws -> JSONValue {
        var reader = Reader(buffer)
        if let keys {
            reader.cachesKeys = true
            swap(&reader.keys, &keys.keys)
        }
        defer {
            if let keys { swap(&reader.keys, &keys.keys) }
        }
        guard reader.count > 0, reader[0] == marker else {
            throw Reader.damaged("does not start with the binary form's marker", at: 0)
        }
        reader.position = 1
        let value = try reader.value(depth: 0)
        guard reader.position == reader.count else {
            throw Reader.damaged("has \(reader.count - reader.position) bytes after its value", at: reader.position)
        }
        return value
    }

    /// Reads the binary form from a buffer, checking every length against it.
    struct Reader {
        let base: UnsafePointer<UInt8>?
        let count: Int
        var position = 0
        /// Whether member keys are looked up in (and remembered into) ``keys``.
        var cachesKeys = false
        /// Member keys by their position among the keys read (see ``KeyCache``).
        var keys: [String] = []
        /// The position of the next member key read.
        var nextKey = 0

        init(_ buffer: UnsafeBufferPointer<UInt8>) {
            base = buffer.baseAddress
            count = buffer.count
        }

        subscript(i: Int) -> UInt8 { base.map { $0[i] } ?? 0 }

        @inline(never)
        static func damaged(_ what: String, at offset: Int) -> Damage {
            Damage(error: KVDocsError(.decoding, "the binary document \(what) (byte \(offset))"))
        }

        @inline(__always)
        mutating func byte() throws -> UInt8 {
            guard position < count, let base else { throw Self.damaged("ends in the middle of a value", at: position) }
            defer { position += 1 }
            return base[position]
        }

        @inline(__always)
        mutating func varint() throws -> Int {
            var result: UInt = 0, shift: UInt = 0
            let start = position
            while true {
                let b = try byte()
                guard shift < 63 else { throw Self.damaged("has a length too long to read", at: start) }
                result |= UInt(b & 0x7F) << shift
                if b < 0x80 { break }
                shift += 7
            }
            guard result <= UInt(Int32.max) else { throw Self.damaged("has a length too large (\(result))", at: start) }
            return Int(result)
        }

        @inline(__always)
        mutating func fixed(_ width: Int) throws -> UInt64 {
            guard width <= count - position, let base else {
                throw Self.damaged("ends in the middle of a number", at: position)
            }
            var v: UInt64 = 0
            for k in (0..<width).reversed() { v = v << 8 | UInt64(base[position + k]) }
            position += width
            return v
        }

        /// The next `n` bytes, checked to lie in the buffer.
        @inline(__always)
        mutating func span(_ n: Int) throws -> UnsafeBufferPointer<UInt8> {
            guard n >= 0, n <= count - position, let base else {
                throw Self.damaged("has a length (\(n)) beyond its end", at: position)
            }
            defer { position += n }
            return UnsafeBufferPointer(start: base + position, count: n)
        }

        mutating func string() throws -> String {
            let start = position
            guard let s = Self.text(try span(try varint())) else {
                throw Self.damaged("has a string that is not valid UTF-8", at: start)
            }
            return s
        }

        /// `bytes` as a string, or `nil` when they are not valid UTF-8. ASCII (most keys
        /// and many values) takes a fast path (`String(validating:)` measures slower).
        static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
            var ascii = true
            for b in bytes where b >= 0x80 {
                ascii = false
                break
            }
            return ascii ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
        }

        static func signExtend(_ v: UInt64, width: Int) -> Int64 {
            let shift = UInt64(64 - 8 * width)
            return Int64(bitPattern: v << shift) >> Int64(shift)
        }

        /// An integer tag's width in bytes, or `nil`.
        static func intWidth(tag: UInt8) -> Int? {
            switch tag {
            case Tag.int8: 1
            case Tag.int16: 2
            case Tag.int32: 4
            case Tag.int64: 8
            default: nil
            }
        }

        /// An object tag's offset width, or `nil`.
        static func offsetWidth(tag: UInt8) -> Int? {
            switch tag {
            case Tag.object1: 1
            case Tag.object2: 2
            case Tag.object4: 4
            default: nil
            }
        }

        /// The value at the position, whole. Recursion runs through this small function and
        /// the container readers only, so documents at the nesting limit fit a 512 KiB
        /// stack in a debug build.
        mutating func value(depth: Int) throws -> JSONValue {
            let start = position
            let tag = try byte()
            switch tag {
            case Tag.array: return try array(depth: depth, start: start)
            case Tag.object1, Tag.object2, Tag.object4: return try object(tag: tag, depth: depth, start: start)
            default: return try scalar(tag: tag, start: start)
            }
        }

        static let tooDeep = "nests deeper than \(JSONValue.maximumDepth) levels"

        @inline(never)
        private mutating func scalar(tag: UInt8, start: Int) throws -> JSONValue {
            switch tag {
            case Tag.null: return .null
            case Tag.false: return .bool(false)
            case Tag.true: return .bool(true)
            case Tag.int8, Tag.int16, Tag.int32, Tag.int64:
                let width = Self.intWidth(tag: tag) ?? 8
                return .int(Self.signExtend(try fixed(width), width: width))
            case Tag.uint64: return .uint(try fixed(8))
            case Tag.double:
                let d = Double(bitPattern: try fixed(8))
                guard d.isFinite else { throw Self.damaged("has a number that is not finite", at: start) }
                return .double(d)
            case Tag.string: return .string(try string())
            default:
                throw Self.damaged("has an unknown tag \(tag)", at: start)
            }
        }

        @inline(never)
        private mutating func array(depth: Int, start: Int) throws -> JSONValue {
            guard depth < JSONValue.maximumDepth else { throw Self.damaged(Self.tooDeep, at: start) }
            let n = try varint()
            let end = try bodyEnd()
            var elements: [JSONValue] = []
            elements.reserveCapacity(Swift.min(n, end - position))
            for _ in 0..<n { elements.append(try value(depth: depth + 1)) }
            guard position == end else {
                throw Self.damaged("has an array whose length does not match its elements", at: start)
            }
            return .array(elements)
        }

        @inline(never)
        private mutating func object(tag: UInt8, depth: Int, start: Int) throws -> JSONValue {
            guard depth < JSONValue.maximumDepth else { throw Self.damaged(Self.tooDeep, at: start) }
            let width = Self.offsetWidth(tag: tag) ?? 4
            let n = try varint()
            let end = try bodyEnd()
            guard n <= (end - position) / (width + 2) + 1 else {
                throw Self.damaged("has an object whose count does not fit its length", at: start)
            }
            var offsets = position
            position += n * width
            let first = position
            var members: [JSONObject.Element] = []
            members.reserveCapacity(n)
            var previous: UnsafeBufferPointer<UInt8>?
            for _ in 0..<n {
                try checkOffset(at: offsets, width: width, expected: position - first)
                offsets += width
                let (name, key) = try memberKey(after: previous)
                previous = key
                members.append((key: name, value: try value(depth: depth + 1)))
            }
            guard position == end else {
                throw Self.damaged("has an object whose length does not match its members", at: start)
            }
            return .object(JSONObject(sortedMembers: members))
        }

        /// Checks that the offset stored at `at` is `expected`.
        @inline(never)
        private func checkOffset(at: Int, width: Int, expected: Int) throws {
            var o = Reader(base: base, count: count, position: at)
            guard try o.fixed(width) == UInt64(expected) else {
                throw Self.damaged("has a member offset that does not match", at: at)
            }
        }

        /// A member's key, checked to sort after `previous` and to be UTF-8.
        @inline(never)
        private mutating func memberKey(after previous: UnsafeBufferPointer<UInt8>?) throws -> (
            String, UnsafeBufferPointer<UInt8>
        ) {
            let keyStart = position
            let key = try span(try varint())
            if let previous, !Self.less(previous, key) {
                throw Self.damaged("has object keys out of order", at: keyStart)
            }
            if cachesKeys {
                let n = nextKey
                nextKey += 1
                // Bytes equal to a valid string's are valid UTF-8.
                if n < keys.count, Self.equal(keys[n], key) { return (keys[n], key) }
                guard let name = Self.text(key) else {
                    throw Self.damaged("has a key that is not valid UTF-8", at: keyStart)
                }
                if n < keys.count {
                    keys[n] = name
                } else if n < KeyCache.capacity {
                    keys.append(name)
                }
                return (name, key)
            }
            guard let name = Self.text(key) else {
                throw Self.damaged("has a key that is not valid UTF-8", at: keyStart)
            }
            return (name, key)
        }

        /// Whether `string`'s UTF-8 is `bytes`.
        @inline(__always)
        static func equal(_ string: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            let utf8 = string.utf8
            guard utf8.count == bytes.count else { return false }
            if let equal = utf8.withContiguousStorageIfAvailable({ compare($0, bytes) == 0 }) { return equal }
            return utf8.elementsEqual(bytes)
        }

        init(base: UnsafePointer<UInt8>?, count: Int, position: Int) {
            self.base = base
            self.count = count
            self.position = position
        }

        /// Reads a container's body length; returns where its body ends.
        mutating func bodyEnd() throws -> Int {
            let length = try varint()
            guard length <= count - position else {
                throw Self.damaged("has a length (\(length)) beyond its end", at: position)
            }
            return position + length
        }

        /// Whether `a` sorts strictly before `b`, bytewise.
        static func less(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
            compare(a, b) < 0
        }

        @inline(__always)
        static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
            compareBytes(a, b)
        }

        /// Moves past the value at the position without reading it.
        mutating func skip() throws {
            let start = position
            let tag = try byte()
            switch tag {
            case Tag.null, Tag.false, Tag.true: return
            case Tag.int8, Tag.int16, Tag.int32, Tag.int64: _ = try span(Self.intWidth(tag: tag) ?? 8)
            case Tag.uint64, Tag.double: _ = try span(8)
            case Tag.string: _ = try span(try varint())
            case Tag.array, Tag.object1, Tag.object2, Tag.object4:
                _ = try varint()
                position = try bodyEnd()
            default: throw Self.damaged("has an unknown tag \(tag)", at: start)
            }
        }
    }
}

extension JSONValue {
    /// Reads the bytes a document store keeps for a document or a covering index entry:
    /// the binary form that store format 4 writes, or the JSON text of earlier formats
    /// (told apart by the first byte). For tools that read a store's raw entries, such as
    /// kvrepl's `get` and `scan`.
    /// - Throws: `.decoding` naming the byte offset where the bytes are damaged, or not JSON.
    public init(storedDocument bytes: some Collection<UInt8>) throws {
        self = BinaryJSON.isBinary(bytes) ? try BinaryJSON.decode(bytes) : try JSONValue(parsing: bytes)
    }

    /// Reads the bytes a document store keeps for a document; see
    /// ``init(storedDocument:)-(Collection<UInt8>)``. The overload for arrays, which calls
    /// from other modules take, so that they do not run the generic one unspecialized.
    public init(storedDocument bytes: [UInt8]) throws {
        self = BinaryJSON.isBinary(bytes) ? try BinaryJSON.decode(bytes) : try JSONValue(parsing: bytes)
    }
}
